// One evaluation run. params and metrics are JSON strings (Neo4j properties cannot nest maps);
// a few headline metrics are copied to plain properties for Browser captions.
MERGE (r:EvalRun {id: $id})
SET r.method = $method,
    r.corpus = $corpus,
    r.params = $params,
    r.started_at = $started_at,
    r.finished_at = $finished_at,
    r.metrics = $metrics,
    r.questions = $questions,
    r.hits_at_10 = $hits_at_10,
    r.mrr_at_10 = $mrr_at_10

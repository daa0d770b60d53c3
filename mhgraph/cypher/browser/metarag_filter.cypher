// Multi-Meta-RAG, question $question in run $run: the filter it searched with (on ASKED; a
// table column), the Sources the filter names, how many chunks of the run's corpus the filter
// admits, the evidence the run kept (RETRIEVED {rank, score, gold}: reranked when the run had a
// reranker) with documents and sources, and the gold chunks, each with whether the filter admits
// it (a gold chunk outside the filter can never be found).
MATCH (run:EvalRun {id: $run})-[asked:ASKED]->(q:Question {id: $question})
CALL (run, asked) {
  MATCH (c:Chunk)
  WHERE c.corpus = run.corpus
    AND (asked.filter_sources IS NULL OR c.source IN asked.filter_sources)
    AND (asked.filter_days IS NULL OR date(c.published_at) IN asked.filter_days)
    AND (asked.filter_from IS NULL OR date(c.published_at) >= asked.filter_from)
    AND (asked.filter_to IS NULL OR date(c.published_at) <= asked.filter_to)
  RETURN count(c) AS admitted
}
CALL (asked) {
  OPTIONAL MATCH (s:Source) WHERE s.name IN coalesce(asked.filter_sources, [])
  RETURN collect(s) AS filter_sources
}
CALL (q) {
  OPTIONAL MATCH kept = (q)-[:RETRIEVED {run: $run}]->(:Chunk)-[:FROM_DOCUMENT]->(:Document)-[:PUBLISHED_BY]->(:Source)
  RETURN collect(kept) AS evidence
}
CALL (q, run, asked) {
  OPTIONAL MATCH gold = (q)-[:HAS_GOLD]->(g:Chunk)-[:FROM_DOCUMENT]->(:Document)-[:PUBLISHED_BY]->(:Source)
  WHERE g.corpus = run.corpus
  RETURN collect(gold) AS gold,
         collect({chunk: g.id, source: g.source, published: date(g.published_at),
                  admitted: (asked.filter_sources IS NULL OR g.source IN asked.filter_sources)
                    AND (asked.filter_days IS NULL OR date(g.published_at) IN asked.filter_days)
                    AND (asked.filter_from IS NULL OR date(g.published_at) >= asked.filter_from)
                    AND (asked.filter_to IS NULL OR date(g.published_at) <= asked.filter_to)}) AS gold_admitted
}
RETURN q, asked.filter AS filter, asked.filter_extractor AS extractor, asked.fallback AS fallback, admitted,
       filter_sources, evidence, gold, gold_admitted

// metarag's filter for each question of a run, on (:EvalRun)-[:ASKED]->(:Question): the filter
// as JSON (filter), its parts as properties Browser queries can use (filter_sources, filter_days,
// filter_from, filter_to; null: no such condition), the extractor, and whether the search fell
// back to no filter. $filters: [{question, filter, sources, days, from, to, fallback}].
MATCH (r:EvalRun {id: $run})
UNWIND $filters AS f
MATCH (r)-[asked:ASKED]->(q:Question {id: f.question})
SET asked.filter = f.filter, asked.filter_sources = f.sources, asked.filter_days = f.days,
    asked.filter_from = f.from, asked.filter_to = f.to, asked.filter_extractor = $extractor,
    asked.fallback = f.fallback

// The evidence path of question $question in run $run: retrieved chunks (RETRIEVED {hop, rank,
// score, gold}) with their documents and, where they have one, sources; the gold chunks
// (HAS_GOLD) in the run's corpus; and the links between hops (LED_TO). Gold chunks the run
// missed are attached by HAS_GOLD only. In a stale run (run.stale: documents changed since),
// `retired` holds what it retrieved from the old versions (RetiredChunk, outside the graph now).
MATCH (run:EvalRun {id: $run})
MATCH (q:Question {id: $question})
CALL (q) {
  OPTIONAL MATCH retrieved = (q)-[:RETRIEVED {run: $run}]->(:Chunk)-[:FROM_DOCUMENT]->(:Document)
  RETURN collect(retrieved) AS retrieved
}
CALL (q) {
  OPTIONAL MATCH old = (q)-[:RETRIEVED {run: $run}]->(:RetiredChunk)
  RETURN collect(old) AS retired
}
CALL (q, run) {
  OPTIONAL MATCH gold = (q)-[:HAS_GOLD]->(g:Chunk)-[:FROM_DOCUMENT]->(:Document)
  WHERE g.corpus = run.corpus
  RETURN collect(gold) AS gold
}
CALL (q, run) {
  OPTIONAL MATCH published = (q)-[r:RETRIEVED|HAS_GOLD]->(c:Chunk)-[:FROM_DOCUMENT]->(:Document)-[:PUBLISHED_BY]->(:Source)
  WHERE r.run = $run OR (r:HAS_GOLD AND c.corpus = run.corpus)
  RETURN collect(DISTINCT published) AS sources
}
CALL () {
  OPTIONAL MATCH hops = (:Chunk)-[:LED_TO {run: $run, question: $question}]->(:Chunk)
  RETURN collect(hops) AS hops
}
RETURN q, retrieved, retired, gold, sources, hops, coalesce(run.stale, false) AS stale

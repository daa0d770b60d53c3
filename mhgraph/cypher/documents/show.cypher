// One Document of corpus $corpus by key: its properties, its chunks in reading order with their
// claims, and the evaluation runs whose traces reach it.
MATCH (d:Document {corpus: $corpus, key: $key})
OPTIONAL MATCH (d)-[:PUBLISHED_BY]->(s:Source)
CALL (d) {
  MATCH (c:Chunk)-[:FROM_DOCUMENT]->(d)
  WITH c ORDER BY c.index
  RETURN collect({index: c.index, id: c.id, tokens: c.token_count, start: c.start_char, end: c.end_char,
                  claim_count: COUNT { (c)-[:HAS_CLAIM]->() }, text: c.text}) AS chunks
}
CALL (d) {
  OPTIONAL MATCH (c:Chunk)-[:FROM_DOCUMENT]->(d)
  OPTIONAL MATCH (r:EvalRun {corpus: d.corpus})-[:ASKED]->(:Question)-[t:RETRIEVED|HAS_GOLD]->(c)
  WHERE t:HAS_GOLD OR t.run = r.id
  RETURN collect(DISTINCT r.id) AS runs
}
RETURN d {.*, source: s.name} AS document, chunks, runs

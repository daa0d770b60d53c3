// Delete a run's traces: the LED_TO relationships between its chunks, every trace node and
// relationship that hangs from its Questions (a trace node and relationship carry the run's id:
// Steps, RETRIEVED, CITED, USED_CLAIM, ASKED_TARGET, a method's own), the EvalRun, and Questions
// that no other run asked, with the HAS_GOLD and FROM_CLAIM edges that describe them (the Chunks
// and Claims stay).
MATCH (r:EvalRun {id: $run})
CALL (r) {
  MATCH ()-[t:LED_TO]->() WHERE t.run = $run DELETE t
}
CALL (r) {
  MATCH (r)-[:ASKED]->(:Question)-[t]->(n) WHERE t.run = $run AND n.run = $run
  WITH DISTINCT n
  DETACH DELETE n
}
CALL (r) {
  MATCH (r)-[:ASKED]->(:Question)-[t]-() WHERE t.run = $run DELETE t
}
CALL (r) {
  MATCH (r)-[:ASKED]->(q:Question)
  WHERE NOT EXISTS { (other:EvalRun)-[:ASKED]->(q) WHERE other <> r }
  DETACH DELETE q
}
DETACH DELETE r
RETURN count(*) AS deleted

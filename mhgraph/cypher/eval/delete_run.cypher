// Delete a run's traces: its RETRIEVED, LED_TO, CITED, USED_CLAIM and ASKED_TARGET relationships, its Steps, the EvalRun, and
// Questions that no other run asked.
MATCH (r:EvalRun {id: $run})
CALL (r) {
  MATCH ()-[t:RETRIEVED|LED_TO|CITED|USED_CLAIM|ASKED_TARGET]->() WHERE t.run = $run DELETE t
}
CALL (r) {
  MATCH (s:Step {run: $run}) DETACH DELETE s
}
CALL (r) {
  MATCH (r)-[:ASKED]->(q:Question)
  WHERE NOT EXISTS { (other:EvalRun)-[:ASKED]->(q) WHERE other <> r }
  DETACH DELETE q
}
DETACH DELETE r
RETURN count(*) AS deleted

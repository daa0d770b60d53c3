// The claims a `claims` run used per question: (:Question)-[:USED_CLAIM {run, hop, target}]->(:Claim),
// and (:Question)-[:ASKED_TARGET {run, hop}]->(:Target) for each target asked that the graph holds
// by name, so Browser walks question -> target -> claim -> chunk -> document.
// $rows: [{question, hop, target (its key), claim}]; $corpus.
UNWIND $rows AS row
MATCH (q:Question {id: row.question})
MATCH (k:Claim {id: row.claim})
CREATE (q)-[:USED_CLAIM {run: $run, hop: row.hop, target: row.target}]->(k)
WITH q, row
CALL (q, row) {
  MATCH (t:Target {corpus: $corpus, key: row.target})
  MERGE (q)-[:ASKED_TARGET {run: $run, hop: row.hop}]->(t)
}

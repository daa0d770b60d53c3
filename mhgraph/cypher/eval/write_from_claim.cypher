// The claims each generated question was built from (`mhgraph generate`'s `claims`):
// (:Question)-[:FROM_CLAIM]->(:Claim), a Claim matched by id; an id the graph does not hold is
// skipped. Like HAS_GOLD it describes the question, not a run (it carries no `run`): a question's
// FROM_CLAIM edges become the claims its latest file lists, and go with the Question when the last
// run that asked it is deleted. $rows: [{question, claim_ids: [claim id]}], questions with claims only.
UNWIND $rows AS row
MATCH (q:Question {id: row.question})
CALL (q, row) {
  MATCH (q)-[old:FROM_CLAIM]->(k:Claim)
  WHERE NOT k.id IN row.claim_ids
  DELETE old
}
CALL (q, row) {
  UNWIND row.claim_ids AS claim_id
  MATCH (k:Claim {id: claim_id})
  MERGE (q)-[:FROM_CLAIM]->(k)
}

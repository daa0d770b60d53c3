// The claims a `ppr` run seeded its walk from, per question:
// (:Question)-[:SEED_FACT {run, score}]->(:Claim). $rows: [{question, claim, score}].
UNWIND $rows AS row
MATCH (q:Question {id: row.question})
MATCH (k:Claim {id: row.claim})
CREATE (q)-[:SEED_FACT {run: $run, score: row.score}]->(k)

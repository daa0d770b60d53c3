// The names of a `ppr` run's walk per question: the seeds (role "seed", weight its reset weight) and
// the names the walk ranked highest (role "visited", weight its PageRank score), with their rank:
// (:Question)-[:WALKED {run, role, weight, rank}]->(:Topic|Target). $rows: [{question, node (element
// id), role, weight, rank}].
UNWIND $rows AS row
MATCH (q:Question {id: row.question})
MATCH (n) WHERE elementId(n) = row.node
CREATE (q)-[:WALKED {run: $run, role: row.role, weight: row.weight, rank: row.rank}]->(n)

// Every retrieved chunk of a run: (:Question)-[:RETRIEVED {run, hop, rank, score, gold}]->(:Chunk).
// $rows: [{question, chunk, hop, rank, score, gold}].
UNWIND $rows AS row
MATCH (q:Question {id: row.question})
MATCH (c:Chunk {id: row.chunk})
CREATE (q)-[:RETRIEVED {run: $run, hop: row.hop, rank: row.rank, score: row.score, gold: row.gold}]->(c)

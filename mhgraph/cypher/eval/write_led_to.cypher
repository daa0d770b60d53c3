// Parent -> child links between hops (TreeHop branches, IR-CoT steps):
// (:Chunk)-[:LED_TO {run, question, hop}]->(:Chunk). $rows: [{question, parent, chunk, hop}].
UNWIND $rows AS row
MATCH (a:Chunk {id: row.parent})
MATCH (b:Chunk {id: row.chunk})
CREATE (a)-[:LED_TO {run: $run, question: row.question, hop: row.hop}]->(b)

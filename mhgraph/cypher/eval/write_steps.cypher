// The steps of multi-step methods (IR-CoT's thoughts, decomposition's sub-questions), one per hop:
// (:Question)-[:STEP {run, hop}]->(:Step {run, question, hop, query, thought})-[:FETCHED {rank, score, gold}]->(:Chunk),
// (:Step)-[:NEXT_STEP]->(:Step) in order, and (:Chunk)-[:PROMPTED {run}]->(:Step) from the chunk whose
// text led to the step's thought. $rows: [{question, hop, query, thought, parent, previous_hop, fetched: [{chunk, rank, score, gold}]}].
UNWIND $rows AS row
MATCH (q:Question {id: row.question})
CREATE (s:Step {run: $run, question: row.question, hop: row.hop, query: row.query, thought: row.thought})
CREATE (q)-[:STEP {run: $run, hop: row.hop}]->(s)
WITH s, row
CALL (s, row) {
  UNWIND row.fetched AS f
  MATCH (c:Chunk {id: f.chunk})
  CREATE (s)-[:FETCHED {rank: f.rank, score: f.score, gold: f.gold}]->(c)
}
CALL (s, row) {
  MATCH (p:Chunk {id: row.parent})
  CREATE (p)-[:PROMPTED {run: $run}]->(s)
}
CALL (s, row) {
  MATCH (before:Step {run: $run, question: row.question, hop: row.previous_hop})
  CREATE (before)-[:NEXT_STEP]->(s)
}

// Questions of a run and their gold chunks. $questions: [{id, text, type, answer, gold: [chunk id]}].
MATCH (r:EvalRun {id: $run})
UNWIND $questions AS q
MERGE (n:Question {id: q.id})
SET n.text = q.text, n.type = q.type, n.answer = q.answer
MERGE (r)-[:ASKED]->(n)
WITH n, q
UNWIND q.gold AS gold_id
MATCH (c:Chunk {id: gold_id})
MERGE (n)-[:HAS_GOLD]->(c)

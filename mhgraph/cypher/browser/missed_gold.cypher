// Questions of run $run with gold chunks it did not retrieve, worst first.
MATCH (run:EvalRun {id: $run})-[:ASKED]->(q:Question)-[:HAS_GOLD]->(g:Chunk)-[:FROM_DOCUMENT]->(d:Document)
WHERE g.corpus = run.corpus
WITH q, g, d, EXISTS { (q)-[:RETRIEVED {run: $run}]->(g) } AS found
WITH q, count(g) AS gold, sum(CASE WHEN found THEN 1 ELSE 0 END) AS found,
     collect(CASE WHEN NOT found THEN d.title END) AS missed_documents
WHERE found < gold
RETURN q.id AS question, q.type AS type, q.text AS text, found, gold, missed_documents
ORDER BY toFloat(found) / gold, question

// Questions (asked in both runs) where run $run_a retrieved a gold chunk that run $run_b missed.
MATCH (a:EvalRun {id: $run_a})-[:ASKED]->(q:Question)<-[:ASKED]-(:EvalRun {id: $run_b})
MATCH (q)-[:HAS_GOLD]->(g:Chunk)
WHERE g.corpus = a.corpus
  AND EXISTS { (q)-[:RETRIEVED {run: $run_a}]->(g) }
  AND NOT EXISTS { (q)-[:RETRIEVED {run: $run_b}]->(g) }
MATCH (g)-[:FROM_DOCUMENT]->(d:Document)
RETURN q.id AS question, q.type AS type, q.text AS text, collect(DISTINCT d.title) AS gold_found_only_by_a
ORDER BY question

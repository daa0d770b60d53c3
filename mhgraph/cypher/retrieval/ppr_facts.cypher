// Graph traversal's seed facts: the $facts claims of corpus $corpus nearest to the question's
// embedding $embedding in the Claim vector index ($candidates searched), each with its chunk and
// its Topic (null for a claim without one) and Target (element ids): their names seed the walk,
// weighted by the claim's score.
CYPHER 25
MATCH (k:Claim)
  SEARCH k IN (VECTOR INDEX claim_embedding FOR $embedding WHERE k.corpus = $corpus LIMIT $candidates)
  SCORE AS score
WITH k, score ORDER BY score DESC, k.id LIMIT $facts
MATCH (c:Chunk)-[:HAS_CLAIM]->(k)-[:TARGETS]->(t:Target)
OPTIONAL MATCH (k)-[:ABOUT]->(p:Topic)
RETURN k.id AS claim_id, k.text AS claim, score, c.id AS chunk_id, elementId(p) AS topic, p.name AS topic_name,
       elementId(t) AS target, t.name AS target_name
ORDER BY score DESC, claim_id

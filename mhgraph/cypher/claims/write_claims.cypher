// A batch of claims: (:Chunk)-[:HAS_CLAIM]->(:Claim)-[:TARGETS]->(:Target), (:Claim)-[:ABOUT]->(:Topic).
// Topics and Targets are merged by (corpus, key): the bridges between articles.
// $claims: [{id, chunk, document, text, embedding, topic, topic_key, target, target_key}].
UNWIND $claims AS cl
MATCH (c:Chunk {id: cl.chunk})
CREATE (k:Claim {id: cl.id, corpus: $corpus, text: cl.text, document_id: cl.document})
SET k.embedding = cl.embedding
CREATE (c)-[:HAS_CLAIM]->(k)
MERGE (t:Target {corpus: $corpus, key: cl.target_key})
  ON CREATE SET t.name = cl.target
CREATE (k)-[:TARGETS]->(t)
MERGE (p:Topic {corpus: $corpus, key: cl.topic_key})
  ON CREATE SET p.name = cl.topic
CREATE (k)-[:ABOUT]->(p)

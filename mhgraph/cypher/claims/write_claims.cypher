// A batch of claims: (:Chunk)-[:HAS_CLAIM]->(:Claim)-[:TARGETS]->(:Target), (:Claim)-[:ABOUT]->(:Topic).
// Topics and Targets are merged by (corpus, key): the bridges between articles.
// $claims: [{id, chunk, document, text, embedding, topic, topic_key, target, target_key}]; a claim
// whose topic_key is null (its sentence names no topic) has no ABOUT edge.
// A name is spelled as the claim of the smallest chunk id that names it (`named_by`), whichever
// batch is written first: the local build writes in chunk order, the Ray engine's workers in any.
UNWIND $claims AS cl
MATCH (c:Chunk {id: cl.chunk})
CREATE (k:Claim {id: cl.id, corpus: $corpus, text: cl.text, document_id: cl.document})
SET k.embedding = cl.embedding
CREATE (c)-[:HAS_CLAIM]->(k)
MERGE (t:Target {corpus: $corpus, key: cl.target_key})
  ON CREATE SET t.name = cl.target, t.named_by = cl.chunk
  ON MATCH SET t.name = CASE WHEN cl.chunk < t.named_by THEN cl.target ELSE t.name END,
               t.named_by = CASE WHEN cl.chunk < t.named_by THEN cl.chunk ELSE t.named_by END
CREATE (k)-[:TARGETS]->(t)
WITH k, cl WHERE cl.topic_key IS NOT NULL
MERGE (p:Topic {corpus: $corpus, key: cl.topic_key})
  ON CREATE SET p.name = cl.topic, p.named_by = cl.chunk
  ON MATCH SET p.name = CASE WHEN cl.chunk < p.named_by THEN cl.topic ELSE p.name END,
               p.named_by = CASE WHEN cl.chunk < p.named_by THEN cl.chunk ELSE p.named_by END
CREATE (k)-[:ABOUT]->(p)

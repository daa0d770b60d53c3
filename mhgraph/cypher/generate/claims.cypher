// The claims of corpus $corpus for question synthesis: each claim with its chunk, its document, its
// bridge-target and bridge-topic (key and name), in id order.
MATCH (c:Chunk {corpus: $corpus})-[:HAS_CLAIM]->(k:Claim)
OPTIONAL MATCH (k)-[:TARGETS]->(t:Target)
OPTIONAL MATCH (k)-[:ABOUT]->(p:Topic)
RETURN k.id AS id, k.text AS text, c.id AS chunk_id, k.document_id AS document_id,
       t.key AS target_key, t.name AS target, p.key AS topic_key, p.name AS topic
ORDER BY id

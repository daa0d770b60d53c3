// The claim graph of corpus $corpus as graph traversal (`ppr`) walks it: one row per claim with the
// chunk that holds it and its Topic and Target (element ids and names), and one row with nulls for
// a chunk without claims (still a node: dense similarity seeds it). Each claim becomes the edges
// chunk - topic, chunk - target and topic - target (mhgraph/traversal/claim_graph.py); a claim
// without a topic, the edge chunk - target alone.
MATCH (c:Chunk {corpus: $corpus})
OPTIONAL MATCH (c)-[:HAS_CLAIM]->(k:Claim)-[:TARGETS]->(t:Target)
OPTIONAL MATCH (k)-[:ABOUT]->(p:Topic)
RETURN c.id AS chunk, elementId(p) AS topic, p.name AS topic_name, elementId(t) AS target, t.name AS target_name

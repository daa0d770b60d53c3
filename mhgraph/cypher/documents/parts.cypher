// What hangs from the Documents $ids: their chunks, the chunks' claims, the Topic / Target names
// those claims point at, and the Sources the documents are published by (element ids, to be
// removed or checked for other users within the same transaction).
MATCH (d:Document) WHERE d.id IN $ids
OPTIONAL MATCH (c:Chunk)-[:FROM_DOCUMENT]->(d)
OPTIONAL MATCH (c)-[:HAS_CLAIM]->(k:Claim)
OPTIONAL MATCH (k)-[:ABOUT|TARGETS]->(n)
OPTIONAL MATCH (d)-[:PUBLISHED_BY]->(s:Source)
RETURN collect(DISTINCT d.key) AS keys, collect(DISTINCT elementId(d)) AS documents, collect(DISTINCT elementId(c)) AS chunks,
       collect(DISTINCT elementId(k)) AS claims, collect(DISTINCT elementId(n)) AS names,
       collect(DISTINCT elementId(s)) AS sources

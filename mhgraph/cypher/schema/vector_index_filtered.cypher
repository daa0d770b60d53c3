// The Chunk vector index carrying source, published_at and corpus for in-index filtering by the
// Cypher 25 SEARCH clause (Neo4j 2026.01+). $quantization: NONE, SCALAR or BINARY (the
// server's own default is BINARY). The name is a parameter; the label and property names are
// fixed by the schema.
CYPHER 25
CREATE VECTOR INDEX $name IF NOT EXISTS
FOR (c:Chunk) ON c.embedding
WITH [c.source, c.published_at, c.corpus]
OPTIONS { indexConfig: {
  `vector.dimensions`: toInteger($dimensions),
  `vector.similarity_function`: 'cosine',
  `vector.quantization.type`: $quantization
} }

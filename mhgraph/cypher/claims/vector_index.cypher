// The Claim vector index, carrying corpus for in-index filtering by the Cypher 25 SEARCH clause
// (Neo4j 2026.01+). The name is a parameter; the label and property names are fixed by the schema.
CYPHER 25
CREATE VECTOR INDEX $name IF NOT EXISTS
FOR (k:Claim) ON k.embedding
WITH [k.corpus]
OPTIONS { indexConfig: {
  `vector.dimensions`: toInteger($dimensions),
  `vector.similarity_function`: 'cosine'
} }

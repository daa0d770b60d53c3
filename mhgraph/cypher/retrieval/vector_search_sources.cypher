// Top-k chunks of corpus $corpus by cosine similarity among the chunks of the given sources,
// filtered inside the vector index by the Cypher 25 SEARCH clause (Neo4j 2026.01+; the index
// carries c.corpus and c.source). Parameters: $embedding (list of floats), $corpus, $sources
// (list of source names), $top_k, and $candidates (>= $top_k): neighbours searched for, of which
// the best $top_k are kept.
CYPHER 25
MATCH (c:Chunk)
  SEARCH c IN (VECTOR INDEX chunk_embedding FOR $embedding
               WHERE c.corpus = $corpus AND c.source IN $sources LIMIT $candidates)
  SCORE AS score
WITH c, score ORDER BY score DESC, c.id LIMIT $top_k
MATCH (c)-[:FROM_DOCUMENT]->(d:Document)
RETURN c.id AS chunk_id, c.text AS text, score, d.id AS document_id, d.title AS title,
       c.source AS source, c.published_at AS published_at
ORDER BY score DESC, chunk_id

// Top-k chunks of corpus $corpus by cosine similarity through the Chunk vector index, with the
// Cypher 25 SEARCH clause (Neo4j 2026.01+; the index carries c.corpus, so the filter runs inside
// it). Parameters: $embedding (list of floats), $corpus, $top_k, and $candidates (>= $top_k): how
// many neighbours the index searches for, of which the best $top_k are kept. HNSW's search width
// follows that number, so asking for more than k finds the true top k more often
// (bench/results/vector-index-*.md).
CYPHER 25
MATCH (c:Chunk)
  SEARCH c IN (VECTOR INDEX chunk_embedding FOR $embedding WHERE c.corpus = $corpus LIMIT $candidates)
  SCORE AS score
WITH c, score ORDER BY score DESC, c.id LIMIT $top_k
MATCH (c)-[:FROM_DOCUMENT]->(d:Document)
RETURN c.id AS chunk_id, c.text AS text, score, d.id AS document_id, d.title AS title,
       c.source AS source, c.published_at AS published_at
ORDER BY score DESC, chunk_id

// TreeHop's search for every live branch of a hop in one round trip: for each row of $queries
// ({branch, embedding}), the top-k chunks of corpus $corpus by cosine similarity through the Chunk
// vector index (Cypher 25 SEARCH, filtered inside the index), with each chunk's own embedding for
// the next hop's update. Parameters: $queries, $corpus, $top_k, $candidates (>= $top_k):
// neighbours searched for per row, of which the best $top_k are kept; $with_embeddings: false at
// the last hop, which needs no chunk embedding (they are most of the bytes sent back).
CYPHER 25
UNWIND $queries AS query
CALL (query) {
  MATCH (c:Chunk)
    SEARCH c IN (VECTOR INDEX chunk_embedding FOR query.embedding WHERE c.corpus = $corpus LIMIT $candidates)
    SCORE AS score
  RETURN c, score ORDER BY score DESC, c.id LIMIT $top_k
}
MATCH (c)-[:FROM_DOCUMENT]->(d:Document)
RETURN query.branch AS branch, c.id AS chunk_id, c.text AS text, score, d.id AS document_id, d.title AS title,
       c.source AS source, c.published_at AS published_at,
       CASE WHEN $with_embeddings THEN c.embedding END AS embedding
ORDER BY branch, score DESC, chunk_id

// treehop_search.cypher with metarag's metadata filter at every hop: each row of $queries
// ({branch, embedding}) searches only the chunks of corpus $corpus that the filter admits,
// inside the vector index (Cypher 25 SEARCH ... WHERE; the index carries source and published_at).
// The filter names sources only. Parameters: those of treehop_search and $sources (Source names).
CYPHER 25
UNWIND $queries AS query
CALL (query) {
  MATCH (c:Chunk)
    SEARCH c IN (VECTOR INDEX chunk_embedding FOR query.embedding
                 WHERE c.corpus = $corpus AND c.source IN $sources LIMIT $candidates)
    SCORE AS score
  RETURN c, score ORDER BY score DESC, c.id LIMIT $top_k
}
MATCH (c)-[:FROM_DOCUMENT]->(d:Document)
RETURN query.branch AS branch, c.id AS chunk_id, c.text AS text, score, d.id AS document_id, d.title AS title,
       c.source AS source, c.published_at AS published_at,
       CASE WHEN $with_embeddings THEN c.embedding END AS embedding
ORDER BY branch, score DESC, chunk_id

// treehop_search.cypher with metarag's metadata filter at every hop: each row of $queries
// ({branch, embedding}) searches only the chunks of corpus $corpus that the filter admits,
// inside the vector index (Cypher 25 SEARCH ... WHERE; the index carries source and published_at).
// Sources and dates: one search per day range, the best $top_k of all kept per row.
// Parameters: those of treehop_search, $sources and $ranges (list of {from, to} DATETIMEs).
CYPHER 25
UNWIND $queries AS query
CALL (query) {
  UNWIND $ranges AS range
  CALL (query, range) {
    MATCH (c:Chunk)
      SEARCH c IN (VECTOR INDEX chunk_embedding FOR query.embedding
                   WHERE c.corpus = $corpus AND c.source IN $sources
                     AND c.published_at >= range.from AND c.published_at < range.to
                   LIMIT $candidates)
      SCORE AS score
    RETURN c, score
  }
  WITH c, max(score) AS score
  RETURN c, score ORDER BY score DESC, c.id LIMIT $top_k
}
MATCH (c)-[:FROM_DOCUMENT]->(d:Document)
RETURN query.branch AS branch, c.id AS chunk_id, c.text AS text, score, d.id AS document_id, d.title AS title,
       c.source AS source, c.published_at AS published_at,
       CASE WHEN $with_embeddings THEN c.embedding END AS embedding
ORDER BY branch, score DESC, chunk_id

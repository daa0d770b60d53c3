// Multi-Meta-RAG, in-index form with a date condition and no source condition: for each range in
// $ranges, the vector index searches only the chunks of corpus $corpus published in [from, to)
// (Cypher 25 SEARCH clause, Neo4j 2026.01+); the best $top_k of all ranges are kept.
// Parameters: $embedding, $corpus, $ranges (list of {from, to} DATETIMEs), $top_k, $candidates.
CYPHER 25
UNWIND $ranges AS range
CALL (range) {
  MATCH (c:Chunk)
    SEARCH c IN (VECTOR INDEX chunk_embedding FOR $embedding
                 WHERE c.corpus = $corpus AND c.published_at >= range.from AND c.published_at < range.to
                 LIMIT $candidates)
    SCORE AS score
  RETURN c, score
}
WITH c, max(score) AS score
ORDER BY score DESC, c.id LIMIT $top_k
MATCH (c)-[:FROM_DOCUMENT]->(d:Document)
RETURN c.id AS chunk_id, c.text AS text, score, d.id AS document_id, d.title AS title,
       c.source AS source, c.published_at AS published_at
ORDER BY score DESC, chunk_id

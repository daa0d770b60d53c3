// Top-k chunks by Lucene BM25 over the Chunk fulltext index. Parameters: $index, $query (a
// Lucene query string, special characters escaped), $top_k.
CALL db.index.fulltext.queryNodes($index, $query, {limit: $top_k}) YIELD node AS c, score
MATCH (c)-[:FROM_DOCUMENT]->(d:Document)
RETURN c.id AS chunk_id, c.text AS text, score, d.id AS document_id, d.title AS title,
       c.source AS source, c.published_at AS published_at
ORDER BY score DESC, chunk_id

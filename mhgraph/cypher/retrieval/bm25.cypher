// Top-k chunks of corpus $corpus by Lucene BM25 over the Chunk fulltext index. Parameters: $index,
// $query (a Lucene query string, special characters escaped), $corpus, $top_k. The procedure
// streams hits best first and Cypher pulls lazily, so the corpus filter reads only as many hits
// as it takes to find $top_k of this corpus (a fulltext index cannot filter by property).
CALL db.index.fulltext.queryNodes($index, $query) YIELD node AS c, score
WITH c, score WHERE c.corpus = $corpus
LIMIT $top_k
MATCH (c)-[:FROM_DOCUMENT]->(d:Document)
RETURN c.id AS chunk_id, c.text AS text, score, d.id AS document_id, d.title AS title,
       c.source AS source, c.published_at AS published_at
ORDER BY score DESC, chunk_id

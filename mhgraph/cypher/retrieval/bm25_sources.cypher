// Top-k chunks of corpus $corpus from the sources $sources by Lucene BM25 over the Chunk fulltext
// index: bm25.cypher with the outlets a step names (IR-CoT's metadata-aware steps). Parameters:
// $index, $query (escaped Lucene), $corpus, $sources (source names as the graph has them), $top_k.
// Hits are read best first until $top_k of those sources are found.
CALL db.index.fulltext.queryNodes($index, $query) YIELD node AS c, score
WITH c, score WHERE c.corpus = $corpus AND c.source IN $sources
LIMIT $top_k
MATCH (c)-[:FROM_DOCUMENT]->(d:Document)
RETURN c.id AS chunk_id, c.text AS text, score, d.id AS document_id, d.title AS title,
       c.source AS source, c.published_at AS published_at
ORDER BY score DESC, chunk_id

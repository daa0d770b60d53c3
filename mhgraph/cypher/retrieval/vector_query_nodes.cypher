// Top-k chunks of corpus $corpus by cosine similarity through the Chunk vector index, with the
// procedure that servers before 2026.01 offer. Their index cannot filter, so the corpus is
// filtered after it: with several corpora in the graph, fewer than $top_k may come back.
// Parameters: $index, $embedding, $corpus, $top_k, and $candidates (>= $top_k): neighbours
// searched for, of which the best $top_k of the corpus are kept.
CALL db.index.vector.queryNodes($index, $candidates, $embedding) YIELD node AS c, score
WITH c, score WHERE c.corpus = $corpus
WITH c, score ORDER BY score DESC, c.id LIMIT $top_k
MATCH (c)-[:FROM_DOCUMENT]->(d:Document)
RETURN c.id AS chunk_id, c.text AS text, score, d.id AS document_id, d.title AS title,
       c.source AS source, c.published_at AS published_at
ORDER BY score DESC, chunk_id

// A page of corpus $corpus's chunk texts: the first $limit after id $after, in id order
// (mhgraph reranker prepare embeds their sentences ahead of the questions).
MATCH (c:Chunk {corpus: $corpus})
WHERE c.id > $after
RETURN c.id AS id, c.text AS text
ORDER BY id
LIMIT $limit

// Every chunk embedding of corpus $corpus, for graph traversal's dense seeds over the whole corpus
// (HippoRAG 2 seeds every passage by its dense score; `--ppr-candidates 0`).
MATCH (c:Chunk {corpus: $corpus})
RETURN c.id AS chunk, c.embedding AS embedding

// Each chunk of corpus $corpus with its source and publication time, for graph traversal's
// metadata seeds: the chunks of each source the question names, within the dates it names, seed the
// walk as a named node seeds its chunks (`--ppr-metadata-weight`).
MATCH (c:Chunk {corpus: $corpus})
RETURN c.id AS chunk, c.source AS source, c.published_at AS published_at

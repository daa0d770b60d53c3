// Whether any chunk of corpus $corpus has a source or a publication date: a metadata filter has
// nothing to work on otherwise.
RETURN EXISTS {
  MATCH (c:Chunk {corpus: $corpus}) WHERE c.source IS NOT NULL OR c.published_at IS NOT NULL
} AS present

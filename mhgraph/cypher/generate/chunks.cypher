// The chunks of corpus $corpus: text, document and embedding (for quoting facts verbatim, the
// difficulty's similarity term and the null questions' retrieval check), in id order.
MATCH (c:Chunk {corpus: $corpus})-[:FROM_DOCUMENT]->(d:Document)
RETURN c.id AS id, d.id AS document_id, c.text AS text, c.embedding AS embedding
ORDER BY id

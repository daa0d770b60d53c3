// The chunks of corpus $corpus whose claims were not yet extracted by $extractor (with $only_new:
// only the chunks with no claims at all, as after an ingest wrote new versions; with $documents a
// list of document ids: only their chunks), with their document's id and title, in id order (a
// build resumes where it stopped).
MATCH (c:Chunk {corpus: $corpus})-[:FROM_DOCUMENT]->(d:Document)
WHERE (c.claims_by IS NULL OR (NOT $only_new AND c.claims_by <> $extractor))
  AND ($documents IS NULL OR d.id IN $documents)
RETURN c.id AS chunk_id, c.text AS text, d.id AS document_id, d.title AS title
ORDER BY chunk_id

// The corpus an ingest writes to: (:Corpus {name, files, document_key, chunk_size, chunk_overlap,
// revision, created_at, updated_at}). `files` lists every file ingested into it, so a default name
// taken from another file can be refused; `document_key` is the rule its documents are keyed by
// (set once; the caller compares it first: corpus_key.cypher); the chunking is the last ingest's, which
// evaluation reports record.
MERGE (k:Corpus {name: $name})
  ON CREATE SET k.created_at = datetime(), k.files = [], k.revision = 0
SET k.files = CASE WHEN $file IN k.files THEN k.files ELSE k.files + $file END,
    k.document_key = coalesce(k.document_key, $document_key),
    k.chunk_size = $chunk_size, k.chunk_overlap = $chunk_overlap, k.updated_at = datetime()
RETURN k.document_key AS document_key

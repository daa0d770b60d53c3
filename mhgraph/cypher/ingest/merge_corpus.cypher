// The corpus an ingest writes to: (:Corpus {name, files, chunk_size, chunk_overlap, created_at,
// updated_at}). `files` lists every file ingested into it, so a default name taken from another file
// can be refused; the chunking is the last ingest's, which evaluation reports record.
MERGE (k:Corpus {name: $name})
  ON CREATE SET k.created_at = datetime(), k.files = []
SET k.files = CASE WHEN $file IN k.files THEN k.files ELSE k.files + $file END,
    k.chunk_size = $chunk_size, k.chunk_overlap = $chunk_overlap, k.updated_at = datetime()

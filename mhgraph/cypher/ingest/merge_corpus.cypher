// The corpus an ingest writes to: (:Corpus {name, files, created_at, updated_at}). `files` lists
// every file ingested into it, so a default name taken from another file can be refused.
MERGE (k:Corpus {name: $name})
  ON CREATE SET k.created_at = datetime(), k.files = []
SET k.files = CASE WHEN $file IN k.files THEN k.files ELSE k.files + $file END,
    k.updated_at = datetime()

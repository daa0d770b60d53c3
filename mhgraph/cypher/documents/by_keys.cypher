// The stored Documents of corpus $corpus with the keys $keys: id, key, version and the ingest
// fingerprint (which also changes with the model, the chunking or the embedded header).
MATCH (d:Document {corpus: $corpus}) WHERE d.key IN $keys
RETURN d.id AS id, d.key AS key, d.version AS version, d.ingest_fingerprint AS fingerprint,
       coalesce(d.files, []) AS files

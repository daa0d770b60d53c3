// The stored Documents of corpus $corpus with the keys $keys: id, key, version and the ingest
// fingerprint (which also changes with the model, the chunking or the embedded header), the files
// that hold it and the one its version was read from (null: stored before mhgraph recorded it).
MATCH (d:Document {corpus: $corpus}) WHERE d.key IN $keys
RETURN d.id AS id, d.key AS key, d.version AS version, d.ingest_fingerprint AS fingerprint,
       coalesce(d.files, []) AS files, d.written_by AS written_by

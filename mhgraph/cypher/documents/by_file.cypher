// The Documents of corpus $corpus last ingested from file $file, with the keys not in $keep (all
// of them when $keep is null): what a re-ingest of that file no longer holds, or `documents delete --file`.
MATCH (d:Document {corpus: $corpus, file: $file})
WHERE $keep IS NULL OR NOT d.key IN $keep
RETURN d.id AS id, d.key AS key
ORDER BY key

// The Documents of corpus $corpus that file $file holds, but those with keys in $keep (all of them
// when $keep is null): what a re-ingest of that file no longer holds, or `documents delete --file`.
// `files` says which other files hold each: it is deleted only when $file was the last.
MATCH (d:Document {corpus: $corpus})
WHERE $file IN coalesce(d.files, []) AND ($keep IS NULL OR NOT d.key IN $keep)
RETURN d.id AS id, d.key AS key, d.files AS files
ORDER BY key

// The Documents of corpus $corpus (of file $file only, unless $file is null), by key: version,
// title, source, date, the files that hold it, the corpus revision that wrote it,
// its chunks and how many of them have their claims.
MATCH (d:Document {corpus: $corpus})
WHERE $file IS NULL OR $file IN coalesce(d.files, [])
OPTIONAL MATCH (d)-[:PUBLISHED_BY]->(s:Source)
RETURN d.key AS key, d.version AS version, d.title AS title, s.name AS source,
       d.published_at AS published_at, d.files AS files, d.revision AS revision,
       COUNT { (:Chunk)-[:FROM_DOCUMENT]->(d) } AS chunks,
       COUNT { (c:Chunk)-[:FROM_DOCUMENT]->(d) WHERE c.claims_by IS NOT NULL } AS chunks_with_claims
ORDER BY key

// Corpus $corpus records that the documents with keys $keys were removed at revision $revision.
MATCH (k:Corpus {name: $corpus})
SET k.removed_keys = coalesce(k.removed_keys, []) + $keys,
    k.removed_revisions = coalesce(k.removed_revisions, []) + [key IN $keys | $revision]

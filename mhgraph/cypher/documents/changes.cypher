// How many documents of corpus $corpus were written or removed after revision $revision (a key
// written and removed counts once), and the corpus's current revision.
MATCH (k:Corpus {name: $corpus})
CALL (k) {
  OPTIONAL MATCH (d:Document {corpus: $corpus}) WHERE coalesce(d.revision, 0) > $revision
  RETURN collect(d.key) AS written
}
WITH k, written,
     [i IN range(0, size(coalesce(k.removed_keys, [])) - 1) WHERE k.removed_revisions[i] > $revision
      | k.removed_keys[i]] AS removed
UNWIND (written + removed + [null]) AS key
RETURN coalesce(k.revision, 0) AS revision, count(DISTINCT key) AS changed

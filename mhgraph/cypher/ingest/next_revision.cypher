// The corpus's next revision: each document written or removed makes one (a trained model records
// the revision it was trained at; documents/changes.cypher counts the documents changed since).
MATCH (k:Corpus {name: $corpus})
SET k.revision = coalesce(k.revision, 0) + 1
RETURN k.revision AS revision

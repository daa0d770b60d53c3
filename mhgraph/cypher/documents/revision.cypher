// Corpus $corpus's revision now (one per document written or removed) and when it was made: what
// a trained model records of the corpus it was trained on.
MATCH (k:Corpus {name: $corpus})
RETURN coalesce(k.revision, 0) AS revision, toString(k.created_at) AS created

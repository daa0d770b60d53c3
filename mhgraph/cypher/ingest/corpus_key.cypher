// The key rule corpus $corpus was made with (no row: no such corpus; null: made before keys).
MATCH (k:Corpus {name: $corpus})
RETURN k.document_key AS document_key

// Chunks of corpus $corpus stored before corpora had their own fulltext index get the corpus's
// Chunk label $label (auto-commit: in Browser, put :auto before it).
CYPHER 25
MATCH (c:Chunk {corpus: $corpus}) WHERE NOT c:$($label)
CALL (c) { SET c:$($label) } IN TRANSACTIONS OF 5000 ROWS

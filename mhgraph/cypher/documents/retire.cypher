// Nodes $nodes (element ids) that evaluation traces still reach (a relationship whose type is not
// in $structure) are retired instead of deleted: their own relationships in the graph go, their
// labels become Retired and Retired<label> (RetiredChunk, RetiredClaim, ...), the embeddings are
// dropped, so no index or method finds them, and the traces keep what they pointed at. Deleting
// the last run that reaches one deletes it (eval/delete_run.cypher).
CYPHER 25
UNWIND $nodes AS id
MATCH (n) WHERE elementId(n) = id AND EXISTS { (n)-[t]-() WHERE NOT type(t) IN $structure }
CALL (n) {
  MATCH (n)-[s]-() WHERE type(s) IN $structure DELETE s
}
WITH n, labels(n) AS was
REMOVE n:$(was)
SET n:$(["Retired"] + [l IN was WHERE l IN $kinds | "Retired" + l]),
    n.retired_labels = was, n.retired_at = datetime(), n.embedding = null, n.name_embedding = null
RETURN count(n) AS retired

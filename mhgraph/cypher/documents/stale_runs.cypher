// The evaluation runs whose traces reach the chunks or claims of the Documents $ids (about to be
// replaced or deleted), each with those documents' keys (documents/mark_stale.cypher marks them). A trace edge is any relationship whose type is not in $structure (the
// lexical graph's and claim layer's own); it belongs to a run by its `run` property, by the run
// property of the node it comes from (a Step), or else to every run that asked its Question
// (HAS_GOLD, FROM_CLAIM). The runs keep their results: the traced nodes are retired, not deleted.
MATCH (d:Document) WHERE d.id IN $ids
MATCH (c:Chunk)-[:FROM_DOCUMENT]->(d)
CALL (c) {
  MATCH (c)-[t]-(x) WHERE NOT type(t) IN $structure RETURN t, x
  UNION
  MATCH (c)-[:HAS_CLAIM]->(:Claim)-[t]-(x) WHERE NOT type(t) IN $structure RETURN t, x
}
CALL (t, x, d) {
  WITH t, x WHERE t.run IS NOT NULL RETURN t.run AS run
  UNION
  WITH t, x WHERE t.run IS NULL AND x.run IS NOT NULL RETURN x.run AS run
  UNION
  MATCH (r:EvalRun {corpus: d.corpus})-[:ASKED]->(x:Question) WHERE t.run IS NULL RETURN r.id AS run
}
RETURN run, collect(DISTINCT d.key) AS keys

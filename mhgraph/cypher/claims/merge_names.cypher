// Near-duplicate names merged (mhgraph/claims/merge.py). $pairs: [{absorbed, kept}], element ids of
// two Topic or two Target nodes. The absorbed node's claims move to the kept node, which records
// the absorbed name and key (and any it had absorbed before); the absorbed node is deleted.
UNWIND $pairs AS pair
MATCH (a) WHERE elementId(a) = pair.absorbed
MATCH (k) WHERE elementId(k) = pair.kept
CALL (a, k) {
  MATCH (c:Claim)-[r:TARGETS]->(a)
  MERGE (c)-[:TARGETS]->(k)
  DELETE r
}
CALL (a, k) {
  MATCH (c:Claim)-[r:ABOUT]->(a)
  MERGE (c)-[:ABOUT]->(k)
  DELETE r
}
SET k.aliases = coalesce(k.aliases, []) + a.name + coalesce(a.aliases, []),
    k.alias_keys = coalesce(k.alias_keys, []) + a.key + coalesce(a.alias_keys, [])
DETACH DELETE a

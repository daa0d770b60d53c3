// The Topic or Target nodes ($label, one of the two) of corpus $corpus, with the name embedding a
// merge kept on them (null until one is computed) and how many claims point at each.
CYPHER 25
MATCH (n:$($label) {corpus: $corpus})
RETURN elementId(n) AS node, n.key AS key, n.name AS name, n.name_embedding AS embedding,
       COUNT { (n)<-[:ABOUT|TARGETS]-(:Claim) } AS claims
ORDER BY key

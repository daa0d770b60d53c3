// The keys merged into another Topic or Target node ($label) of corpus $corpus, with the key kept.
CYPHER 25
MATCH (n:$($label) {corpus: $corpus})
WHERE n.alias_keys IS NOT NULL
UNWIND n.alias_keys AS alias
RETURN alias, n.key AS key

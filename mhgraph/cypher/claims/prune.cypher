// Topics and Targets of corpus $corpus that no claim points at any more (after a re-build).
MATCH (n {corpus: $corpus})
WHERE (n:Topic OR n:Target) AND NOT EXISTS { (n)<-[:ABOUT|TARGETS]-(:Claim) }
DETACH DELETE n

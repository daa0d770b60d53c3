// The evaluation runs whose traces reach the Topic / Target names $nodes (element ids: names no
// claim points at any more, about to go with a removed document's claims), as a `ppr` walk
// (WALKED) or a `claims` question's target (ASKED_TARGET) does: a trace edge is any relationship
// whose type is not in $structure, and it names its run.
UNWIND $nodes AS id
MATCH (n) WHERE elementId(n) = id
MATCH (n)-[t]-() WHERE NOT type(t) IN $structure AND t.run IS NOT NULL
RETURN DISTINCT t.run AS run

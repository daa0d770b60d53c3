// The SYNONYM edges between Topic and Target names of corpus $corpus removed (before they are
// recomputed: mhgraph/claims/synonyms.py).
MATCH (n {corpus: $corpus})-[s:SYNONYM]->()
WHERE n:Topic OR n:Target
DELETE s

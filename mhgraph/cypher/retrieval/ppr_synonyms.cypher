// The SYNONYM edges between Topic and Target names of corpus $corpus (mhgraph/claims/synonyms.py),
// with their cosine similarity: graph traversal walks them both ways.
MATCH (a {corpus: $corpus})-[s:SYNONYM]->(b)
WHERE a:Topic OR a:Target
RETURN elementId(a) AS a, elementId(b) AS b, s.score AS score

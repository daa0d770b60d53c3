// Synonym edges between two Topic / Target names (mhgraph/claims/synonyms.py): $rows [{a, b, score}],
// a and b element ids, score their names' cosine similarity. Stored once per pair; read undirected.
UNWIND $rows AS row
MATCH (a) WHERE elementId(a) = row.a
MATCH (b) WHERE elementId(b) = row.b
CREATE (a)-[:SYNONYM {score: row.score}]->(b)

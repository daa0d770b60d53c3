// Whether corpus $corpus's synonym edges have been drawn (mhgraph/claims/synonyms.py marks it).
MATCH (c:Corpus {name: $corpus})
RETURN c.synonym_threshold IS NOT NULL AS linked, c.synonym_edges AS edges

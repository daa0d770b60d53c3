// Whether corpus $corpus has a claim layer: its synonym edges were drawn (every build ends so,
// mhgraph/claims/synonyms.py marks the Corpus), or a chunk's claims were extracted (a build that stopped).
OPTIONAL MATCH (c:Corpus {name: $corpus})
RETURN coalesce(c.synonym_threshold IS NOT NULL, false)
       OR EXISTS { MATCH (k:Chunk {corpus: $corpus}) WHERE k.claims_by IS NOT NULL } AS built

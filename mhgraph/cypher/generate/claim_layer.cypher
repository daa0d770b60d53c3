// Whether corpus $corpus has its claim layer: its chunks, those whose claims were extracted, by
// which extractors, and its claims.
MATCH (c:Chunk {corpus: $corpus})
WITH count(c) AS chunks, count(c.claims_by) AS done, collect(DISTINCT c.claims_by) AS extractors
CALL () { MATCH (k:Claim {corpus: $corpus}) RETURN count(k) AS claims }
RETURN chunks, done, extractors, claims

// The claim layer of corpus $corpus: claims, chunks with claims, topics, targets, and bridges
// (targets that claims from two or more documents point at).
CALL () { MATCH (k:Claim {corpus: $corpus}) RETURN count(k) AS claims }
CALL () { MATCH (c:Chunk {corpus: $corpus}) RETURN count(c) AS chunks,
                                                 count(c.claims_by) AS chunks_done }
CALL () { MATCH (p:Topic {corpus: $corpus}) RETURN count(p) AS topics }
CALL () { MATCH (t:Target {corpus: $corpus}) RETURN count(t) AS targets }
CALL () {
  MATCH (t:Target {corpus: $corpus})<-[:TARGETS]-(k:Claim)
  WITH t, count(DISTINCT k.document_id) AS documents
  RETURN count(CASE WHEN documents >= 2 THEN t END) AS bridges
}
RETURN claims, chunks, chunks_done, topics, targets, bridges

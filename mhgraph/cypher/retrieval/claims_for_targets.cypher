// Claim-bridge retrieval, one hop: for each target of $targets ({key, name, embedding}), the claims
// of corpus $corpus that point at a Target of that key (name match) or are nearest to the target's
// embedding in the Claim vector index ($candidates of them), each scored by cosine similarity to
// the question's embedding $question; per target the best $per_target not in $exclude (claim ids
// already used). Returns each claim with the target asked, the claim's own Target, its chunk and
// document. The index name is fixed by the schema (mhgraph/claims/build.py).
CYPHER 25
UNWIND $targets AS target
CALL (target) {
  MATCH (k:Claim)
    SEARCH k IN (VECTOR INDEX claim_embedding FOR target.embedding WHERE k.corpus = $corpus LIMIT $candidates)
    SCORE AS similarity
  RETURN k
  UNION
  MATCH (:Target {corpus: $corpus, key: target.key})<-[:TARGETS]-(k:Claim)
  RETURN k
}
WITH target, k WHERE NOT k.id IN $exclude
WITH target, k, vector.similarity.cosine(k.embedding, $question) AS score
ORDER BY target.key, score DESC, k.id
WITH target, collect({claim: k, score: score})[..$per_target] AS best
UNWIND best AS b
WITH target, b.claim AS k, b.score AS score
MATCH (c:Chunk)-[:HAS_CLAIM]->(k)-[:TARGETS]->(t:Target)
MATCH (c)-[:FROM_DOCUMENT]->(d:Document)
RETURN target.key AS asked, k.id AS claim_id, k.text AS claim, t.name AS claim_target, score,
       c.id AS chunk_id, c.text AS text, d.id AS document_id, d.title AS title, c.source AS source,
       c.published_at AS published_at
ORDER BY asked, score DESC, claim_id

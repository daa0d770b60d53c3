// Top-k chunks of corpus $corpus by vector and fulltext (BM25) scores fused linearly, as
// neo4j-graphrag's HybridRetriever does with ranker="linear": each side's scores are divided by
// that side's best score, then score = $alpha x vector + (1 - $alpha) x fulltext (0 for a side
// that did not find the chunk). The vector side contributes its $candidates neighbours, the
// fulltext side its best $depth hits ($top_k in neo4j-graphrag). One deliberate difference: UNION
// ALL where neo4j-graphrag writes UNION, which drops a chunk's second contribution when both sides
// give it the same weighted score (the best hit of both at alpha 0.5 would score 0.5, not 1).
// Parameters: $embedding, $index (fulltext), $query (Lucene, escaped; '' searches the vector side
// alone), $corpus, $alpha, $top_k, $depth (>= $top_k), $candidates (>= $depth).
CYPHER 25
CALL () {
  MATCH (c:Chunk)
    SEARCH c IN (VECTOR INDEX chunk_embedding FOR $embedding WHERE c.corpus = $corpus LIMIT $candidates)
    SCORE AS score
  WITH collect({node: c, score: score}) AS hits, max(score) AS best
  UNWIND hits AS hit
  RETURN hit.node AS c, $alpha * hit.score / best AS score
  UNION ALL
  UNWIND CASE WHEN $query = '' THEN [] ELSE [$query] END AS text
  CALL db.index.fulltext.queryNodes($index, text) YIELD node, score
  WITH node, score WHERE node.corpus = $corpus
  LIMIT $depth
  WITH collect({node: node, score: score}) AS hits, max(score) AS best
  UNWIND hits AS hit
  RETURN hit.node AS c, (1 - $alpha) * hit.score / best AS score
}
WITH c, sum(score) AS score
ORDER BY score DESC, c.id LIMIT $top_k
MATCH (c)-[:FROM_DOCUMENT]->(d:Document)
RETURN c.id AS chunk_id, c.text AS text, score, d.id AS document_id, d.title AS title,
       c.source AS source, c.published_at AS published_at
ORDER BY score DESC, chunk_id

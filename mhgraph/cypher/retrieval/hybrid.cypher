// Top-k chunks of corpus $corpus by vector and fulltext (BM25) scores fused as neo4j-graphrag's
// HybridRetriever fuses them (its SEARCH-clause query, "naive" ranker): each side's scores are
// divided by that side's best score, and a chunk found by both keeps the larger. The vector side
// contributes its $candidates neighbours, the fulltext side its best $depth hits ($top_k in
// neo4j-graphrag); mhgraph adds only the corpus filter. Parameters: $embedding, $index (fulltext),
// $query (a Lucene query string, special characters escaped; '' searches the vector side alone),
// $corpus, $top_k, $depth (>= $top_k), $candidates (>= $depth).
CYPHER 25
CALL () {
  MATCH (c:Chunk)
    SEARCH c IN (VECTOR INDEX chunk_embedding FOR $embedding WHERE c.corpus = $corpus LIMIT $candidates)
    SCORE AS score
  WITH collect({node: c, score: score}) AS hits, max(score) AS best
  UNWIND hits AS hit
  RETURN hit.node AS c, hit.score / best AS score
  UNION
  UNWIND CASE WHEN $query = '' THEN [] ELSE [$query] END AS text
  CALL db.index.fulltext.queryNodes($index, text) YIELD node, score
  WITH node, score WHERE node.corpus = $corpus
  LIMIT $depth
  WITH collect({node: node, score: score}) AS hits, max(score) AS best
  UNWIND hits AS hit
  RETURN hit.node AS c, hit.score / best AS score
}
WITH c, max(score) AS score
ORDER BY score DESC, c.id LIMIT $top_k
MATCH (c)-[:FROM_DOCUMENT]->(d:Document)
RETURN c.id AS chunk_id, c.text AS text, score, d.id AS document_id, d.title AS title,
       c.source AS source, c.published_at AS published_at
ORDER BY score DESC, chunk_id

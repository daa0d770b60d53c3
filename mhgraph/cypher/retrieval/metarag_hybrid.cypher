// Multi-Meta-RAG with hybrid candidates (an mhgraph option; the original searches by vector
// alone): inside the metadata filter, the vector and BM25 scores of corpus $corpus fused as
// neo4j-graphrag's linear ranker fuses them: each side divided by its best score, then
// $alpha x vector + (1 - $alpha) x fulltext. The vector side scores the admitted chunks exactly
// (vector.similarity.cosine); the fulltext side reads BM25 hits best first and keeps the first
// $depth that pass the filter. Each side fuses its best $depth (>= $top_k; a chunk beyond one
// side's $depth gets 0 from it), and the best $top_k of the sum are returned.
// Parameters: $embedding, $index (fulltext), $query (Lucene, escaped; '' for the vector side
// alone), $corpus, $alpha, $top_k, $depth, $sources (list or null: any source), $ranges (list of
// {from, to} DATETIMEs or null: any date).
CYPHER 25
CALL () {
  CALL () {
    UNWIND coalesce($sources, []) AS name
    MATCH (c:Chunk) WHERE c.source = name AND c.corpus = $corpus
    RETURN c
    UNION
    WITH 1 AS any_source WHERE $sources IS NULL
    MATCH (c:Chunk) WHERE c.corpus = $corpus
    RETURN c
  }
  WITH c WHERE $ranges IS NULL OR any(r IN $ranges WHERE c.published_at >= r.from AND c.published_at < r.to)
  WITH c, vector.similarity.cosine(c.embedding, $embedding) AS score
  ORDER BY score DESC LIMIT $depth
  WITH collect({node: c, score: score}) AS hits, max(score) AS best
  UNWIND hits AS hit
  RETURN hit.node AS c, $alpha * hit.score / best AS score
  UNION ALL
  UNWIND CASE WHEN $query = '' THEN [] ELSE [$query] END AS text
  CALL db.index.fulltext.queryNodes($index, text) YIELD node, score
  WITH node, score
  WHERE node.corpus = $corpus AND ($sources IS NULL OR node.source IN $sources)
    AND ($ranges IS NULL OR any(r IN $ranges WHERE node.published_at >= r.from AND node.published_at < r.to))
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

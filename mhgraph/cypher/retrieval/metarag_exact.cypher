// Multi-Meta-RAG, exact pre-filtered form: the chunks of corpus $corpus that pass the metadata
// filter, scored by cosine similarity to $embedding, best $top_k. Works on any server (no vector
// index involved). Parameters: $embedding, $corpus, $top_k, $sources (list of Source names, or
// null: any source), $ranges (list of {from, to} DATETIMEs, half-open [from, to), or null: any
// date). A chunk passes when its source is one of $sources AND its published_at lies in one of
// $ranges. With sources given, the chunk_source range index finds the candidates. Plain Cypher
// (Neo4j 5.23+): no CYPHER 25 needed.
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
ORDER BY score DESC, c.id LIMIT $top_k
MATCH (c)-[:FROM_DOCUMENT]->(d:Document)
RETURN c.id AS chunk_id, c.text AS text, score, d.id AS document_id, d.title AS title,
       c.source AS source, c.published_at AS published_at
ORDER BY score DESC, chunk_id

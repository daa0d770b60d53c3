// Chunks of corpus $corpus by id, in the order of $rows ([{id, score}]), with the score given: how a
// method that ranks chunks outside Cypher (graph traversal) returns them like every other method.
UNWIND range(0, size($rows) - 1) AS i
WITH i, $rows[i] AS row
MATCH (c:Chunk {corpus: $corpus, id: row.id})-[:FROM_DOCUMENT]->(d:Document)
RETURN c.id AS chunk_id, c.text AS text, row.score AS score, d.id AS document_id, d.title AS title,
       c.source AS source, c.published_at AS published_at
ORDER BY i

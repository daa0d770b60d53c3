// Every chunk of corpus $corpus with the span of its document it covers, for gold matching.
MATCH (c:Chunk)-[:FROM_DOCUMENT]->(d:Document)
WHERE c.corpus = $corpus
RETURN c.id AS chunk_id, d.id AS document_id, d.title AS title, c.index AS index,
       c.start_char AS start_char, c.end_char AS end_char, c.text AS text

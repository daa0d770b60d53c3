// The documents of corpus $corpus with the metadata an evidence item carries (a missing value is
// null: a flat corpus has titles only).
MATCH (d:Document {corpus: $corpus})
OPTIONAL MATCH (d)-[:PUBLISHED_BY]->(s:Source)
RETURN d.id AS id, d.title AS title, d.author AS author, d.url AS url, d.category AS category,
       d.published_at AS published_at, s.name AS source
ORDER BY id

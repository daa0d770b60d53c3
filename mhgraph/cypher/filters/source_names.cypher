// The names of the sources that published the documents of corpus $corpus (what filters resolve to).
MATCH (s:Source)<-[:PUBLISHED_BY]-(d:Document)
WHERE d.corpus = $corpus
RETURN DISTINCT s.name AS name
ORDER BY name

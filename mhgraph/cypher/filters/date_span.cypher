// The first and last publication time among the documents of corpus $corpus.
MATCH (d:Document)
WHERE d.corpus = $corpus AND d.published_at IS NOT NULL
RETURN min(d.published_at) AS first, max(d.published_at) AS last

// The embedding models the stored chunks of corpus $corpus were made with (ingest records it on
// each Document).
MATCH (d:Document) WHERE d.corpus = $corpus AND d.embedding_model IS NOT NULL
RETURN collect(DISTINCT d.embedding_model) AS models

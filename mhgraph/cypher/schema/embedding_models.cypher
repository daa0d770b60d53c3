// The embedding models the stored chunks were made with (ingest records it on each Document).
MATCH (d:Document) WHERE d.embedding_model IS NOT NULL
RETURN collect(DISTINCT d.embedding_model) AS models

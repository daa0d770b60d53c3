// The embedding models and embedded headers (embed_header; 'none' before it was recorded) the
// stored chunks of corpus $corpus were made with (ingest records both on each Document).
MATCH (d:Document) WHERE d.corpus = $corpus AND d.embedding_model IS NOT NULL
RETURN collect(DISTINCT d.embedding_model) AS models,
       collect(DISTINCT coalesce(d.embed_header, 'none')) AS headers

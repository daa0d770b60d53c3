// Every corpus with its sizes, the files ingested into it, its embedding models and embedded headers. Documents
// stored before corpora had names are listed as one corpus with name null ($key '' stands for it).
CALL () {
  MATCH (k:Corpus) RETURN k.name AS name
  UNION
  MATCH (d:Document) WHERE d.corpus IS NULL RETURN DISTINCT null AS name
}
OPTIONAL MATCH (k:Corpus {name: name})
WITH name, k, coalesce(name, '') AS key
RETURN name, k.files AS files, k.updated_at AS updated_at,
       COUNT { MATCH (d:Document) WHERE coalesce(d.corpus, '') = key } AS documents,
       COUNT { MATCH (c:Chunk) WHERE coalesce(c.corpus, '') = key } AS chunks,
       COUNT { MATCH (d:Document)-[:PUBLISHED_BY]->(s:Source) WHERE coalesce(d.corpus, '') = key RETURN DISTINCT s }
         AS sources,
       COLLECT { MATCH (d:Document) WHERE coalesce(d.corpus, '') = key AND d.embedding_model IS NOT NULL
                 RETURN DISTINCT d.embedding_model } AS embedding_models,
       COLLECT { MATCH (d:Document) WHERE coalesce(d.corpus, '') = key AND d.embedding_model IS NOT NULL
                 RETURN DISTINCT coalesce(d.embed_header, 'none') } AS embed_headers
ORDER BY name

// Upsert Chunks of corpus $corpus with their embedding and the metadata that retrieval filters on.
UNWIND $chunks AS row
MATCH (doc:Document {id: row.document_id})
MERGE (c:Chunk {id: row.id})
SET c.corpus = $corpus,
    c.index = row.index,
    c.text = row.text,
    c.embedding = row.embedding,
    c.source = row.source,
    c.published_at = row.published_at,
    c.token_count = row.token_count,
    c.start_char = row.start_char,
    c.end_char = row.end_char
MERGE (c)-[:FROM_DOCUMENT]->(doc)

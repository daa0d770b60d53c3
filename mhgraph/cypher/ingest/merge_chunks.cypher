// Upsert Chunks of corpus $corpus with their embedding and the metadata that retrieval filters on.
// $label is the corpus's own Chunk label (graph/schema.py: corpus_chunk_label), which its fulltext
// index covers, so BM25's term statistics are the corpus's alone.
CYPHER 25
UNWIND $chunks AS row
MATCH (doc:Document {id: row.document_id})
MERGE (c:Chunk {id: row.id})
SET c:$($label),
    c.corpus = $corpus,
    c.index = row.index,
    c.text = row.text,
    c.embedding = row.embedding,
    c.source = row.source,
    c.published_at = row.published_at,
    c.token_count = row.token_count,
    c.start_char = row.start_char,
    c.end_char = row.end_char
MERGE (c)-[:FROM_DOCUMENT]->(doc)

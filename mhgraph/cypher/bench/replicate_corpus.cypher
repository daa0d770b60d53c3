// Benchmark helper: copy $copies times the Documents and Chunks of corpus $corpus into corpus
// $target, each copy retitled "(copy k)", with new ids and the same text, embedding, source and
// published_at (re-embedding the same text would give the same vectors). Sources are shared.
// Run per batch of documents: $document_ids.
MATCH (k:Corpus {name: $target})
UNWIND $document_ids AS document_id
MATCH (d:Document {id: document_id})-[:PUBLISHED_BY]->(s:Source)
UNWIND range(1, $copies) AS copy
CREATE (d2:Document {id: d.id + '-copy' + toString(copy), corpus: $target,
                     title: d.title + ' (copy ' + toString(copy) + ')', url: d.url, author: d.author,
                     category: d.category, published_at: d.published_at, embedding_model: d.embedding_model,
                     chunk_size: d.chunk_size, chunk_overlap: d.chunk_overlap})
CREATE (d2)-[:IN_CORPUS]->(k), (d2)-[:PUBLISHED_BY]->(s)
WITH d, d2, copy
MATCH (c:Chunk)-[:FROM_DOCUMENT]->(d)
CREATE (c2:Chunk {id: c.id + '-copy' + toString(copy), corpus: $target, index: c.index, text: c.text,
                  embedding: c.embedding, source: c.source, published_at: c.published_at,
                  token_count: c.token_count, start_char: c.start_char, end_char: c.end_char})
CREATE (c2)-[:FROM_DOCUMENT]->(d2)

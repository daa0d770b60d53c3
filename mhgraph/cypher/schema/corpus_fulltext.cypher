// The fulltext (BM25) index of one corpus's chunks: Lucene keeps term statistics per index, so a
// corpus's BM25 scores do not depend on what else the graph holds. $name: chunk_text_<corpus>;
// {label}: the corpus's Chunk label (Chunk_<corpus>, validated and quoted by the caller: a label
// cannot be a parameter in an index definition).
CREATE FULLTEXT INDEX $name IF NOT EXISTS FOR (c:{label}) ON EACH [c.text]

// The chunking the corpus $corpus was last ingested with (null for a corpus stored before it was kept).
MATCH (k:Corpus {name: $corpus})
RETURN k.chunk_size AS chunk_size, k.chunk_overlap AS chunk_overlap

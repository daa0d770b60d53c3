// Sizes of the lexical graph: in all, and in corpus $corpus.
RETURN COUNT { (:Document) } AS documents,
       COUNT { (:Chunk) } AS chunks,
       COUNT { (:Source) } AS sources,
       COUNT { (:Corpus) } AS corpora,
       COUNT { (d:Document WHERE d.corpus = $corpus) } AS corpus_documents,
       COUNT { (c:Chunk WHERE c.corpus = $corpus) } AS corpus_chunks

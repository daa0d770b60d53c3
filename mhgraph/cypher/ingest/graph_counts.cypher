// Sizes of the lexical graph.
RETURN COUNT { (:Document) } AS documents,
       COUNT { (:Chunk) } AS chunks,
       COUNT { (:Source) } AS sources

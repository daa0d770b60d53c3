// How many chunks corpus $corpus holds.
MATCH (c:Chunk {corpus: $corpus})
RETURN count(c) AS chunks

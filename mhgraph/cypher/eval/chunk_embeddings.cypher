// Stored embeddings of the given chunks.
UNWIND $ids AS id
MATCH (c:Chunk {id: id})
RETURN c.id AS chunk_id, c.embedding AS embedding

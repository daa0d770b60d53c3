// The texts of the given chunks (training examples).
UNWIND $ids AS id
MATCH (c:Chunk {id: id})
RETURN c.id AS chunk_id, c.text AS text

// The embeddings of the claims $ids (the corpus's embedding model), for the MHTS clustering.
UNWIND $ids AS id
MATCH (k:Claim {id: id})
RETURN k.id AS id, k.embedding AS embedding

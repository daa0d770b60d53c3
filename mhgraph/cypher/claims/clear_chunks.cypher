// Remove the claims of the chunks $chunks (a re-build replaces them).
UNWIND $chunks AS id
MATCH (:Chunk {id: id})-[:HAS_CLAIM]->(k:Claim)
DETACH DELETE k

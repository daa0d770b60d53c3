// Reading order inside a Document: (:Chunk)-[:NEXT_CHUNK]->(:Chunk).
UNWIND $links AS link
MATCH (a:Chunk {id: link.from}), (b:Chunk {id: link.to})
MERGE (a)-[:NEXT_CHUNK]->(b)

// Chunks of a re-ingested Document that the new chunking no longer produces.
UNWIND $documents AS d
MATCH (c:Chunk)-[:FROM_DOCUMENT]->(:Document {id: d.id})
WHERE NOT c.id IN d.chunk_ids
DETACH DELETE c

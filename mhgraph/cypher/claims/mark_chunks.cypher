// Record that the chunks $chunks have their claims from $extractor.
UNWIND $chunks AS id
MATCH (c:Chunk {id: id})
SET c.claims_by = $extractor

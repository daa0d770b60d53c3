// The evidence of one live search (no run: `mhgraph mcp`'s explain_evidence and the HTTP API's
// /query give the chunk ids): the chunks $ids with their documents and sources, and the
// NEXT_CHUNK links between chunks of one document. Set :param ids => ['...', ...] first.
MATCH (c:Chunk) WHERE c.id IN $ids
MATCH found = (c)-[:FROM_DOCUMENT]->(d:Document)
OPTIONAL MATCH published = (d)-[:PUBLISHED_BY]->(:Source)
OPTIONAL MATCH next = (c)-[:NEXT_CHUNK]->(n:Chunk) WHERE n.id IN $ids
RETURN found, published, next

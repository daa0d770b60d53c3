// Nodes $nodes (element ids) deleted with their relationships; retired ones (retire.cypher) are
// left alone.
UNWIND $nodes AS id
MATCH (n) WHERE elementId(n) = id AND NOT n:Retired
DETACH DELETE n
RETURN count(*) AS deleted

// Of the Topic / Target / Source nodes $nodes (element ids), those nothing uses any more: a name
// no claim points at, a source no document is published by.
UNWIND $nodes AS id
MATCH (n) WHERE elementId(n) = id
  AND NOT EXISTS { (n)<-[:ABOUT|TARGETS|PUBLISHED_BY]-() }
RETURN collect(elementId(n)) AS nodes

// Uniqueness constraints and range indexes of the lexical graph (Source / Document / Chunk).
CREATE CONSTRAINT source_name IF NOT EXISTS FOR (s:Source) REQUIRE s.name IS UNIQUE;
CREATE CONSTRAINT document_id IF NOT EXISTS FOR (d:Document) REQUIRE d.id IS UNIQUE;
CREATE CONSTRAINT chunk_id IF NOT EXISTS FOR (c:Chunk) REQUIRE c.id IS UNIQUE;
CREATE INDEX chunk_source IF NOT EXISTS FOR (c:Chunk) ON (c.source);
CREATE INDEX chunk_published_at IF NOT EXISTS FOR (c:Chunk) ON (c.published_at);
CREATE INDEX document_published_at IF NOT EXISTS FOR (d:Document) ON (d.published_at);

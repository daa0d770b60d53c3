// Uniqueness constraints and range indexes of the lexical graph (Corpus / Source / Document / Chunk).
CREATE CONSTRAINT corpus_name IF NOT EXISTS FOR (k:Corpus) REQUIRE k.name IS UNIQUE;
CREATE CONSTRAINT source_name IF NOT EXISTS FOR (s:Source) REQUIRE s.name IS UNIQUE;
CREATE CONSTRAINT document_id IF NOT EXISTS FOR (d:Document) REQUIRE d.id IS UNIQUE;
CREATE CONSTRAINT chunk_id IF NOT EXISTS FOR (c:Chunk) REQUIRE c.id IS UNIQUE;
CREATE INDEX chunk_source IF NOT EXISTS FOR (c:Chunk) ON (c.source);
CREATE INDEX chunk_published_at IF NOT EXISTS FOR (c:Chunk) ON (c.published_at);
CREATE INDEX document_published_at IF NOT EXISTS FOR (d:Document) ON (d.published_at);
CREATE INDEX chunk_corpus IF NOT EXISTS FOR (c:Chunk) ON (c.corpus);
CREATE INDEX document_corpus IF NOT EXISTS FOR (d:Document) ON (d.corpus);
CREATE INDEX document_key IF NOT EXISTS FOR (d:Document) ON (d.corpus, d.key);

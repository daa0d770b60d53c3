// Upsert Documents of corpus $corpus with their Sources. $documents: [{id, key, version, title, url,
// author, category, published_at, source, fingerprint, files}]; `files` lists the files that hold
// the document (the one read now, and those that held the version it replaces; added to those the
// document lists already: two of the Ray engine's batches may write one article of two files), `written_by` the
// file this version was read from ($file),
// $revision the corpus revision this write makes (documents/changes.cypher counts what changed
// since a revision). $embedding_model, $chunk_size, $chunk_overlap and $embed_header (the metadata
// embedded above each chunk's text) say how the document's chunks were made, so retrieval can check
// it embeds questions with the same model. The fingerprint is written in the same transaction as
// the chunks, so a Document carrying it is known to be complete.
MATCH (k:Corpus {name: $corpus})
UNWIND $documents AS d
MERGE (doc:Document {id: d.id})
SET doc.corpus = $corpus,
    doc.key = d.key,
    doc.version = d.version,
    doc.files = [f IN coalesce(doc.files, []) WHERE NOT f IN d.files] + d.files,
    doc.written_by = $file,
    doc.revision = $revision,
    doc.title = d.title,
    doc.url = d.url,
    doc.author = d.author,
    doc.category = d.category,
    doc.published_at = d.published_at,
    doc.ingest_fingerprint = d.fingerprint,
    doc.embedding_model = $embedding_model,
    doc.chunk_size = $chunk_size,
    doc.chunk_overlap = $chunk_overlap,
    doc.embed_header = $embed_header
MERGE (doc)-[:IN_CORPUS]->(k)
FOREACH (name IN CASE WHEN d.source IS NULL THEN [] ELSE [d.source] END |
  MERGE (s:Source {name: name})
  MERGE (doc)-[:PUBLISHED_BY]->(s)
)

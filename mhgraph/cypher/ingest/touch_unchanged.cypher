// Documents found unchanged by a re-ingest of file $file: they now belong to that file, and a
// Document stored before documents had versions gets its version. $documents: [{id, version}].
UNWIND $documents AS d
MATCH (doc:Document {id: d.id})
SET doc.file = $file, doc.version = coalesce(doc.version, d.version)

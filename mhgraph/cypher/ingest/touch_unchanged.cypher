// Documents found unchanged by a re-ingest of file $file: that file holds them too, and a Document
// stored before documents had versions gets its version. $documents: [{id, version}].
UNWIND $documents AS d
MATCH (doc:Document {id: d.id})
SET doc.files = CASE WHEN $file IN coalesce(doc.files, []) THEN doc.files ELSE coalesce(doc.files, []) + $file END,
    doc.version = coalesce(doc.version, d.version)

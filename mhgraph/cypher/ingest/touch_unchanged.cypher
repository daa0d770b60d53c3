// Documents found unchanged by a re-ingest of file $file: that file holds them too, and a Document
// stored before documents had versions gets its version; documents that have both are not written
// (a re-ingest that changes nothing writes nothing). $documents: [{id, version}].
UNWIND $documents AS d
MATCH (doc:Document {id: d.id})
WHERE NOT $file IN coalesce(doc.files, []) OR doc.version IS NULL
SET doc.files = CASE WHEN $file IN coalesce(doc.files, []) THEN doc.files ELSE coalesce(doc.files, []) + $file END,
    doc.version = coalesce(doc.version, d.version)

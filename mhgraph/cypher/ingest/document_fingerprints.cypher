// Which of these Documents are already stored completely, and with which fingerprint.
UNWIND $ids AS id
MATCH (d:Document {id: id})
RETURN d.id AS id, d.ingest_fingerprint AS fingerprint

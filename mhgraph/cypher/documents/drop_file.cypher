// File $file no longer holds the Documents $ids (other files still do): it leaves their `files`.
UNWIND $ids AS id
MATCH (d:Document {id: id})
SET d.files = [f IN d.files WHERE f <> $file]

// The files of corpus $corpus that no Document of it holds any more leave its `files` (after documents were
// deleted). Left as they are while a Document stored before files were recorded (no `files`) remains.
MATCH (k:Corpus {name: $corpus})
WHERE NOT EXISTS { MATCH (d:Document {corpus: $corpus}) WHERE d.files IS NULL }
SET k.files = [f IN coalesce(k.files, []) WHERE EXISTS { MATCH (d:Document {corpus: $corpus}) WHERE f IN d.files }]

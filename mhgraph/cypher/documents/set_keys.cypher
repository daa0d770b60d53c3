// Documents of corpus $corpus stored before documents had keys get one, from their stored
// properties under the corpus's key rule ($field: 'url', 'title', 'author' or 'category'; $fallback:
// the title, for the rule 'auto' = url else title), and the corpus's file when it has only one
// (else they belong to no file until a file that holds them is ingested). Those left without a key
// are counted.
MATCH (k:Corpus {name: $corpus})
MATCH (d:Document {corpus: $corpus}) WHERE d.key IS NULL
SET d.key = coalesce(d[$field], CASE WHEN $fallback THEN d.title END),
    d.files = coalesce(d.files, CASE WHEN size(k.files) = 1 THEN k.files ELSE [] END)
RETURN count(d) AS keyed, count(CASE WHEN d.key IS NULL THEN 1 END) AS unkeyed

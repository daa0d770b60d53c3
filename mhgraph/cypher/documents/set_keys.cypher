// Documents of corpus $corpus stored before documents had keys get one, from their stored
// properties under the corpus's key rule ($field: 'url', 'title' or another property; $fallback:
// the title, for the rule 'auto' = url else title). Those left without one are counted.
MATCH (d:Document {corpus: $corpus}) WHERE d.key IS NULL
SET d.key = coalesce(d[$field], CASE WHEN $fallback THEN d.title END)
RETURN count(d) AS keyed, count(CASE WHEN d.key IS NULL THEN 1 END) AS unkeyed

// Delete one corpus: its claim layer (Claims, Topics, Targets), its Chunks, its Documents, its
// Corpus node, then the Sources that no remaining Document is published by. $key is the corpus name ('' for Documents stored before
// corpora had names). Each statement runs in its own auto-commit transaction (in Browser, put
// :auto before the first two); a delete interrupted half way is finished by running it again.
MATCH (n) WHERE (n:Claim OR n:Topic OR n:Target) AND n.corpus = $key
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS;
MATCH (c:Chunk) WHERE coalesce(c.corpus, '') = $key
CALL (c) { DETACH DELETE c } IN TRANSACTIONS OF 5000 ROWS;
MATCH (d:Document) WHERE coalesce(d.corpus, '') = $key
CALL (d) { DETACH DELETE d } IN TRANSACTIONS OF 5000 ROWS;
MATCH (k:Corpus {name: $key})
DETACH DELETE k;
MATCH (s:Source) WHERE NOT EXISTS { (s)<-[:PUBLISHED_BY]-(:Document) }
DETACH DELETE s;

// Constraints and indexes of the claim layer: (:Claim {id, corpus, text, embedding, document_id}),
// (:Topic {corpus, key, name}) and (:Target {corpus, key, name}), one Topic / Target per corpus and key.
CREATE CONSTRAINT claim_id IF NOT EXISTS FOR (k:Claim) REQUIRE k.id IS UNIQUE;
CREATE CONSTRAINT target_key IF NOT EXISTS FOR (t:Target) REQUIRE (t.corpus, t.key) IS UNIQUE;
CREATE CONSTRAINT topic_key IF NOT EXISTS FOR (p:Topic) REQUIRE (p.corpus, p.key) IS UNIQUE;
CREATE INDEX claim_corpus IF NOT EXISTS FOR (k:Claim) ON (k.corpus);

// The claim bridges of question $question in a `claims` run $run: the question, the targets it
// asked for (ASKED_TARGET {hop}), the claims the run used (USED_CLAIM {hop, target}) with their own
// Targets, the chunks holding them and their documents, and the question's gold chunks (HAS_GOLD,
// gold colour in style.grass): question -> target -> claim -> chunk -> document. Turn off
// "Connect result nodes" so other runs' edges stay hidden.
MATCH (run:EvalRun {id: $run})
MATCH (q:Question {id: $question})
CALL (q) {
  OPTIONAL MATCH asked = (q)-[:ASKED_TARGET {run: $run}]->(:Target)
  RETURN collect(asked) AS asked
}
CALL (q) {
  OPTIONAL MATCH used = (q)-[:USED_CLAIM {run: $run}]->(k:Claim)-[:TARGETS]->(:Target)
  OPTIONAL MATCH held = (k)<-[:HAS_CLAIM]-(:Chunk)-[:FROM_DOCUMENT]->(:Document)
  RETURN collect(used) AS used, collect(held) AS held
}
CALL (q, run) {
  OPTIONAL MATCH gold = (q)-[:HAS_GOLD]->(g:Chunk)
  WHERE g.corpus = run.corpus
  RETURN collect(gold) AS gold
}
RETURN q, asked, used, held, gold

// One question in one `ppr` run: the seed facts (SEED_FACT {score}) with their Topics and Targets,
// the names the walk was seeded with (WALKED {role: "seed", weight}) and the names it ranked highest
// (WALKED {role: "visited", weight: PageRank score}), the SYNONYM edges between those names, the
// chunks the run retrieved (RETRIEVED {rank, score, gold}) with the names they hold, and the
// question's gold chunks (HAS_GOLD, gold colour in style.grass). Turn off "Connect result nodes"
// so other runs' edges stay hidden.
MATCH (run:EvalRun {id: $run})
MATCH (q:Question {id: $question})
CALL (q) {
  OPTIONAL MATCH fact = (q)-[:SEED_FACT {run: $run}]->(k:Claim)-[:ABOUT|TARGETS]->()
  RETURN collect(fact) AS facts
}
CALL (q) {
  OPTIONAL MATCH walked = (q)-[:WALKED {run: $run}]->(n)
  RETURN collect(walked) AS walked, collect(n) AS names
}
CALL (names) {
  UNWIND names AS a
  OPTIONAL MATCH synonym = (a)-[:SYNONYM]->(b) WHERE b IN names
  RETURN collect(synonym) AS synonyms
}
CALL (q, names) {
  OPTIONAL MATCH retrieved = (q)-[:RETRIEVED {run: $run}]->(c:Chunk)
  OPTIONAL MATCH holds = (c)-[:HAS_CLAIM]->(:Claim)-[:ABOUT|TARGETS]->(n) WHERE n IN names
  RETURN collect(DISTINCT retrieved) AS retrieved, collect(holds) AS holds
}
CALL (q, run) {
  OPTIONAL MATCH gold = (q)-[:HAS_GOLD]->(g:Chunk)
  WHERE g.corpus = run.corpus
  RETURN collect(gold) AS gold
}
RETURN q, facts, walked, synonyms, retrieved, holds, gold

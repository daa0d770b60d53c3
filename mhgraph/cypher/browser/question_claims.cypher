// The claim tree and chunks of question $question, a question `mhgraph generate` built from claims:
// the question, the claims it was built from (FROM_CLAIM), each claim's Target (TARGETS) and Topic
// (ABOUT), the chunk holding each claim (HAS_CLAIM) and that chunk's Document, and the question's
// gold chunks (HAS_GOLD, gold colour in style.grass, in each corpus it was evaluated on) with their
// Documents. No run: FROM_CLAIM and HAS_GOLD describe the question, not a run; the question is in
// the graph once a traced `mhgraph eval` has asked it.
MATCH (q:Question {id: $question})
CALL (q) {
  OPTIONAL MATCH built = (q)-[:FROM_CLAIM]->(k:Claim)
  OPTIONAL MATCH target = (k)-[:TARGETS]->(:Target)
  OPTIONAL MATCH topic = (k)-[:ABOUT]->(:Topic)
  OPTIONAL MATCH held = (k)<-[:HAS_CLAIM]-(:Chunk)-[:FROM_DOCUMENT]->(:Document)
  RETURN collect(DISTINCT built) AS claims, collect(DISTINCT target) AS targets,
         collect(DISTINCT topic) AS topics, collect(DISTINCT held) AS held
}
CALL (q) {
  OPTIONAL MATCH gold = (q)-[:HAS_GOLD]->(:Chunk)-[:FROM_DOCUMENT]->(:Document)
  RETURN collect(gold) AS gold
}
RETURN q, claims, targets, topics, held, gold

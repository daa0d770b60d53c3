// The reasoning chain of question $question in an `ircot` run $run (or the sub-questions of a
// `decompose` run): the question, its steps in order (each Step holds the thought and the BM25
// query it became), the chunks each step fetched (FETCHED {rank, gold}), the chunk whose text led
// to each thought (PROMPTED), and the question's gold chunks (HAS_GOLD, gold colour in style.grass).
// Set :param run => '...' and :param question => '...' (ids from `mhgraph eval --list-runs` and the
// run's results.json). Turn off "Connect result nodes" so other runs' edges stay hidden.
MATCH (run:EvalRun {id: $run})
MATCH (q:Question {id: $question})
CALL (q) {
  OPTIONAL MATCH steps = (q)-[:STEP {run: $run}]->(:Step)-[:FETCHED]->(:Chunk)
  RETURN collect(steps) AS steps
}
CALL () {
  OPTIONAL MATCH chain = (:Step {run: $run, question: $question})-[:NEXT_STEP]->(:Step)
  RETURN collect(chain) AS chain
}
CALL () {
  OPTIONAL MATCH prompted = (:Chunk)-[:PROMPTED {run: $run}]->(:Step {run: $run, question: $question})
  RETURN collect(prompted) AS prompted
}
CALL (q, run) {
  OPTIONAL MATCH gold = (q)-[:HAS_GOLD]->(g:Chunk)
  WHERE g.corpus = run.corpus
  RETURN collect(gold) AS gold
}
RETURN q, steps, chain, prompted, gold

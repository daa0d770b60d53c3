// The branch tree of question $question in a `treehop` run $run: the question, the chunks hop 1
// retrieved (RETRIEVED {hop: 1}), and each later chunk hanging from the chunk whose branch
// reached it (LED_TO {hop}), down to the last hop; gold chunks in the gold colour (style.grass),
// and the gold chunks the tree missed attached to the question by HAS_GOLD alone.
MATCH (run:EvalRun {id: $run})
MATCH (q:Question {id: $question})
CALL (q) {
  OPTIONAL MATCH roots = (q)-[:RETRIEVED {run: $run, hop: 1}]->(:Chunk)
  RETURN collect(roots) AS roots
}
CALL () {
  OPTIONAL MATCH branches = (:Chunk)-[:LED_TO {run: $run, question: $question}]->(:Chunk)
  RETURN collect(branches) AS branches
}
CALL (q, run) {
  OPTIONAL MATCH missed = (q)-[:HAS_GOLD]->(g:Chunk)
  WHERE g.corpus = run.corpus AND NOT EXISTS { (q)-[:RETRIEVED {run: $run}]->(g) }
  RETURN collect(missed) AS missed
}
RETURN q, roots, branches, missed

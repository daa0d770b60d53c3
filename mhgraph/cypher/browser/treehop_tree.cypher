// The branch tree of question $question in a `treehop` run $run: the question, the chunks hop 1
// retrieved (RETRIEVED {hop: 1}), and each later chunk hanging from the chunk whose branch
// reached it (LED_TO {hop}), down to the last hop; the question's gold chunks (HAS_GOLD, in the
// gold colour of style.grass), those the tree reached and those it missed. Turn off Browser's
// "Connect result nodes" setting (:config autoComplete: false): it would also draw the other
// runs' and questions' LED_TO edges between these chunks.
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
  OPTIONAL MATCH gold = (q)-[:HAS_GOLD]->(g:Chunk)
  WHERE g.corpus = run.corpus
  RETURN collect(gold) AS gold
}
RETURN q, roots, branches, gold

// A run's answers: on (:EvalRun)-[:ASKED]->(:Question) the answer given, whether the reader
// abstained, its correctness under both rules and the reader; and
// (:Question)-[:CITED {run, number}]->(:Chunk) for each excerpt the answer cites.
// $answers: [{question, text, abstained, official, exact, failed, citations: [{chunk, number}]}].
MATCH (r:EvalRun {id: $run})
UNWIND $answers AS a
MATCH (r)-[asked:ASKED]->(q:Question {id: a.question})
SET asked.answer = a.text, asked.abstained = a.abstained, asked.correct_official = a.official,
    asked.correct_exact = a.exact, asked.failed = a.failed, asked.reader = $reader
WITH q, a
UNWIND a.citations AS cited
MATCH (c:Chunk {id: cited.chunk})
CREATE (q)-[:CITED {run: $run, number: cited.number}]->(c)

// The evidence path of question $question in run $run: retrieved chunks (RETRIEVED {hop, rank,
// score, gold}) with their documents and sources, the gold chunks (HAS_GOLD), and the links
// between hops (LED_TO). Gold chunks the run missed are attached by HAS_GOLD only.
MATCH (q:Question {id: $question})
OPTIONAL MATCH retrieved = (q)-[:RETRIEVED {run: $run}]->(:Chunk)-[:FROM_DOCUMENT]->(:Document)-[:PUBLISHED_BY]->(:Source)
OPTIONAL MATCH gold = (q)-[:HAS_GOLD]->(:Chunk)-[:FROM_DOCUMENT]->(:Document)
OPTIONAL MATCH hops = (:Chunk)-[:LED_TO {run: $run, question: $question}]->(:Chunk)
RETURN q, collect(DISTINCT retrieved) AS retrieved, collect(DISTINCT gold) AS gold, collect(DISTINCT hops) AS hops

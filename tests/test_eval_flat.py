"""A corpus without metadata (the flat format): evaluation and its Browser evidence path still work."""

import json

from mhgraph import cypher
from mhgraph.eval.runner import EvalOptions, evaluate
from mhgraph.ingest.pipeline import ingest_corpus
from tests.conftest import SAMPLE


def test_evidence_path_without_sources(empty_graph, settings, embedder, tmp_path) -> None:
    ingest_corpus(SAMPLE / "corpus.txt", settings, empty_graph, embedder=embedder, progress=False)
    options = EvalOptions(method="vector", questions_path=SAMPLE / "questions.json", top_k=4, limit=3,
                          progress=False, runs_dir=tmp_path, run_id="flat-run")
    run = evaluate(settings, empty_graph, options, embedder=embedder)
    assert run.coverage.facts > 0 and run.coverage.matched == run.coverage.facts  # gold needs no metadata
    first = json.loads((run.run_dir / "results.json").read_text())[0]
    records, _, _ = empty_graph.execute_query(cypher.load("browser/evidence_path"), run="flat-run",
                                              question=first["id"], database_=settings.neo4j_database)
    path = records[0]
    assert len(path["retrieved"]) == 4 and len(path["gold"]) == len(first["gold"]) > 0
    assert path["sources"] == []  # no Source nodes in a flat corpus, and nothing is lost for it

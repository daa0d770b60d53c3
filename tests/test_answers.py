"""Answers: the reply parsed into answer, citations and abstention; both scoring rules; the
offline strategy labelled as such; `eval --answer` surviving a failing model and counting it;
`mhgraph ask` streaming an answer with its sources. Real Neo4j, a scripted endpoint on loopback."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from mhgraph.answer import ABSTAIN, OfflineReader
from mhgraph.answer.reader import parse_reply
from mhgraph.eval.answers import exact_correct, official_correct, score_answer
from mhgraph.ingest.pipeline import ingest_corpus
from mhgraph.types import RetrievedChunk
from tests.conftest import SAMPLE, eval_run_dir, run_cli, wipe
from tests.scripted_llm_server import ScriptedServer, Step


def Question_stub(answer: str):  # noqa: N802 (reads like the Question it stands for)
    from types import SimpleNamespace

    return SimpleNamespace(answer=answer)


CHUNKS = [RetrievedChunk(f"c{n}", 1.0 / n, n, text, f"d{n}", f"Title {n}", f"Source {n}",
                         datetime(2023, 10, n, tzinfo=timezone.utc))
          for n, text in enumerate(["Veltrix Robotics recalled 62,000 robots.", "Shares of Veltrix Robotics slid.",
                                    "Circuit Weekly covered the recall."], start=1)]


def test_reply_becomes_answer_citations_and_abstention() -> None:
    answer = parse_reply("Answer: Veltrix Robotics [1][2]\nBecause both say so [9].", CHUNKS, "m")
    assert answer.text == "Veltrix Robotics" and not answer.abstained and answer.failed is None
    assert [(c.number, c.chunk_id, c.title, c.source, c.published) for c in answer.citations] == [
        (1, "c1", "Title 1", "Source 1", "2023-10-01"), (2, "c2", "Title 2", "Source 2", "2023-10-02")]  # [9] was not given
    abstained = parse_reply("Insufficient Information", CHUNKS, "m")
    assert abstained.abstained and abstained.text == ABSTAIN and abstained.citations == []
    assert parse_reply("  \n", CHUNKS, "m").failed == "empty reply"
    below = parse_reply("Answer:\nVeltrix Robotics [1]", CHUNKS, "m")   # the answer on the next line
    assert below.text == "Veltrix Robotics" and [c.number for c in below.citations] == [1]


def test_official_rule_and_exact_match() -> None:
    # MultiHop-RAG's qa_evaluate.py: a shared lower-cased word is enough
    assert official_correct("veltrix", "Veltrix Robotics")
    assert official_correct('The answer to the question is "Yes". It is.', "Yes")   # the quoted part is taken
    assert not official_correct("Yes.", "Yes")   # words are compared as they are: 'yes.' is not 'yes'
    assert official_correct("The Verge", "Is it the same?")   # 'the' is enough: lenient
    assert official_correct("Insufficient information", ABSTAIN)
    assert not official_correct("No", "Yes")
    yes = parse_reply("Yes[1][2]", CHUNKS, "m")   # markers glued to the answer do not hide it
    assert score_answer(Question_stub("Yes"), yes)["official"]
    assert exact_correct("The Veltrix Robotics.", "Veltrix Robotics")
    assert not exact_correct("Veltrix", "Veltrix Robotics")
    assert exact_correct("Insufficient Information", ABSTAIN) and not exact_correct("Yes", ABSTAIN)


def test_offline_reader() -> None:
    reader = OfflineReader()
    assert reader.answer("Did Circuit Weekly report the recall before the slide?", CHUNKS).text == "Yes"
    named = reader.answer("Which company recalled robots and saw its shares slide?", CHUNKS)
    assert named.text == "Veltrix Robotics" and [c.number for c in named.citations] == [1, 2]
    assert reader.answer("Which company?", []).abstained


def test_offline_reader_cites_each_document_once() -> None:
    """Eight chunks of three articles all naming the answer: three citations, each article's
    best-ranked chunk, and the numbers in the text are the citations' numbers."""
    docs = ["d1", "d1", "d2", "d1", "d3", "d2", "d3", "d1"]
    chunks = [RetrievedChunk(f"c{n}", 1.0 / n, n, f"Veltrix Robotics recalled robots, part {n}.", doc,
                             f"Article {doc}", "Source", datetime(2023, 10, 1, tzinfo=timezone.utc))
              for n, doc in enumerate(docs, start=1)]
    answer = OfflineReader().answer("Which company recalled robots?", chunks)
    assert answer.text == "Veltrix Robotics"
    assert [(c.number, c.chunk_id) for c in answer.citations] == [(1, "c1"), (3, "c3"), (5, "c5")]
    assert answer.raw == "Veltrix Robotics [1][3][5]"
    assert parse_reply(answer.raw, chunks, "x").citations == answer.citations


@pytest.fixture(scope="module")
def sample_graph(driver, settings, server, embedder):
    wipe(driver, settings.neo4j_database)
    ingest_corpus(SAMPLE / "corpus.json", settings, driver, embedder=embedder, progress=False)
    return driver


def _env(tmp_path: Path, endpoint: ScriptedServer | None) -> dict[str, str]:
    env = {"MHGRAPH_CACHE_DIR": str(tmp_path / "cache"), "OPENAI_BASE_URL": "", "OPENAI_API_KEY": "",
           "MHGRAPH_LLM_BACKEND": "", "MHGRAPH_LLM_MODEL": ""}
    if endpoint:
        env.update(OPENAI_BASE_URL=endpoint.base_url, MHGRAPH_LLM_MODEL="scripted", MHGRAPH_LLM_MAX_RETRIES="0",
                   MHGRAPH_LLM_TIMEOUT="10")
    return env


def _eval(settings, tmp_path: Path, env: dict[str, str], *more: str):
    result = run_cli(settings, "eval", "--sample", "-m", "vector", "-k", "4", "--answer", "--no-trace",
                     "--no-progress", "--runs-dir", str(tmp_path / "runs"), *more, env=env)
    assert result.returncode == 0, result.stderr
    run_dir = eval_run_dir(result.stdout)
    return result, json.loads((run_dir / "report.json").read_text()), json.loads((run_dir / "results.json").read_text())


def test_eval_answer_offline_is_labelled(sample_graph, settings, tmp_path: Path) -> None:
    result, summary, results = _eval(settings, tmp_path, _env(tmp_path, None))
    answers = summary["answers"]
    assert answers["reader"] == "offline heuristic (no language model)" and answers["usage"] is None
    assert "## Answers" in result.stdout and "Reader: **offline heuristic (no language model)**" in result.stdout
    assert answers["overall"]["questions"] == len(results) == 24
    by_type = answers["by_type"]
    assert set(by_type) == {r["type"] for r in results}
    # the per-question records agree with the summary's figures
    official = sum(r["generated"]["correct"]["official"] for r in results) / len(results)
    gold = {q["query"]: q["answer"] for q in json.loads((SAMPLE / "questions.json").read_text())}
    assert all(r["answer"] == gold[r["query"]] for r in results)   # the gold answer stays beside what was generated
    assert answers["overall"]["official"] == pytest.approx(official)
    nulls = [r for r in results if r["type"] == "null_query"]
    assert answers["abstention"]["null_questions"] == len(nulls)


def test_eval_answer_survives_a_failing_model_and_counts_it(sample_graph, settings, tmp_path: Path) -> None:
    failing = {"Which company, reported by Northwind Tech Review as launching"}   # the first sample question

    def script(body):
        question = body["messages"][-1]["content"]
        if any(question.startswith(f"Question: {f}") for f in failing):
            return Step(status=500, error="the model crashed")
        if "Which" in question.split("\n")[0]:
            return Step("Veltrix Robotics [1]")
        return Step("Yes [1][2]")

    endpoint = ScriptedServer(default=script)
    try:
        env = _env(tmp_path, endpoint)
        result, summary, results = _eval(settings, tmp_path, env)
        answers = summary["answers"]
        assert answers["reader"] == "openai:scripted"
        assert answers["overall"]["failed"] == 1 and answers["usage"]["failures"] == 1
        failed = [r for r in results if r["generated"]["failed"]]
        assert len(failed) == 1 and "HTTP 500" in failed[0]["generated"]["failed"]
        assert not failed[0]["generated"]["correct"]["official"]
        first_call = answers["usage"]["calls"]
        assert first_call == len(endpoint.requests) == 24
        ok = next(r for r in results if r["generated"]["text"] == "Veltrix Robotics")
        assert ok["generated"]["citations"][0]["chunk_id"] == ok["hops"][0]["chunks"][0]["chunk_id"]
        # a re-run is answered from the cache (the failure is retried: failures are not cached)
        _, again, _ = _eval(settings, tmp_path, env)
        assert again["answers"]["usage"]["cache_hits"] == 23 and again["answers"]["usage"]["calls"] == 1
        assert again["answers"]["overall"]["official"] == answers["overall"]["official"]
    finally:
        endpoint.close()


def test_ask_streams_an_answer_with_sources(sample_graph, settings, tmp_path: Path) -> None:
    endpoint = ScriptedServer(default=lambda body: Step("Veltrix Robotics [2]"))
    try:
        result = run_cli(settings, "ask", "Which company recalled the laundry robots?", "-k", "3",
                         env=_env(tmp_path, endpoint))
    finally:
        endpoint.close()
    assert result.returncode == 0, result.stderr
    assert endpoint.requests[0]["stream"] is True
    lines = result.stdout.splitlines()
    assert lines[0] == "Veltrix Robotics [2]"
    assert lines[2] == "Sources:" and lines[3].startswith("  [2] ")
    assert "[openai:scripted, 3 chunks from vector]" in result.stderr
    offline = run_cli(settings, "ask", "Which company recalled the laundry robots?", env=_env(tmp_path, None))
    assert offline.returncode == 0 and "[offline heuristic (no language model), 10 chunks from vector]" in offline.stderr


def test_ask_with_an_unreachable_endpoint_is_one_line(sample_graph, settings, tmp_path: Path) -> None:
    env = {**_env(tmp_path, None), "OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "MHGRAPH_LLM_MODEL": "m",
           "MHGRAPH_LLM_MAX_RETRIES": "0"}
    result = run_cli(settings, "ask", "Which company?", env=env)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1].startswith(
        "error: cannot reach the LLM endpoint http://127.0.0.1:9/v1: ")


def test_answers_are_traced_in_the_graph(sample_graph, settings, tmp_path: Path) -> None:
    env = _env(tmp_path, None)
    result = run_cli(settings, "eval", "--sample", "-m", "vector", "-k", "4", "--answer", "--no-progress",
                     "--runs-dir", str(tmp_path / "runs"), "--run-id", "answers-traced", env=env)
    assert result.returncode == 0, result.stderr
    results = {r["id"]: r for r in json.loads((tmp_path / "runs" / "answers-traced" / "results.json").read_text())}
    rows = sample_graph.execute_query(
        "MATCH (:EvalRun {id: $run})-[a:ASKED]->(q:Question) "
        "RETURN q.id AS id, a.answer AS answer, a.abstained AS abstained, a.correct_official AS official, "
        "a.reader AS reader, [(q)-[c:CITED {run: $run}]->(k:Chunk) | [c.number, k.id]] AS cited",
        run="answers-traced", database_=settings.neo4j_database).records
    assert len(rows) == len(results) == 24
    for row in rows:
        stored = results[row["id"]]["generated"]
        assert (row["answer"], row["abstained"], row["official"]) == (
            stored["text"], stored["abstained"], stored["correct"]["official"])
        assert row["reader"] == "offline heuristic (no language model)"
        assert sorted(row["cited"]) == sorted([c["number"], c["chunk_id"]] for c in stored["citations"])
    assert any(row["cited"] for row in rows)
    deleted = run_cli(settings, "eval", "--delete-run", "answers-traced", env=env)
    assert deleted.returncode == 0, deleted.stderr
    left = sample_graph.execute_query("MATCH ()-[c:CITED {run: 'answers-traced'}]->() RETURN count(c) AS n",
                                      database_=settings.neo4j_database).records[0]["n"]
    assert left == 0


def test_eval_with_the_llm_filter_extractor_names_its_model_and_cost(sample_graph, settings, tmp_path: Path) -> None:
    """metarag's llm extractor through an endpoint: the report says which model read the filters and
    how many calls it cost; names the graph lacks are dropped, never searched."""
    endpoint = ScriptedServer(default=lambda body: Step('{"source": ["circuit weekly", "Daily Bugle"], '
                                                        '"published_on": [], "published_after": null, '
                                                        '"published_before": null}'))
    try:
        result = run_cli(settings, "eval", "--sample", "-m", "metarag", "--filter-extractor", "llm", "-k", "3",
                         "--limit", "5", "--no-trace", "--no-progress", "--runs-dir", str(tmp_path / "runs"),
                         env=_env(tmp_path, endpoint))
    finally:
        endpoint.close()
    assert result.returncode == 0, result.stderr
    run_dir = eval_run_dir(result.stdout)
    filters = json.loads((run_dir / "report.json").read_text())["filters"]
    # the warm-up search before the timed run asks for question 1's filter: not the run's cost,
    # and the run reads that reply from the cache
    assert len(endpoint.requests) == 5
    assert filters["llm"] == "openai:scripted" and filters["llm_usage"]["calls"] == 4
    assert filters["llm_usage"]["cache_hits"] == 1
    assert filters["dropped_names"] == {"Daily Bugle": 5} and filters["filtered"] == 5
    assert "Extractor **llm, model openai:scripted: 4 calls, 44 prompt and 12 completion tokens" in result.stdout

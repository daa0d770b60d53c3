"""`mhgraph generate` on the bundled sample corpus (its claim layer built once, offline, for the
module): the file MultiHop-RAG's loader reads, evidence checked against the graph and the corpus
file (not against the generator's own summary), answers checked against the claim layer and the
publication dates, the same file for the same seed, the filters, near-duplicates, a request larger
than the corpus, one-line errors that write nothing, the claim layer built when missing, and the
model's path against a scripted OpenAI-compatible server (resume after a failure, labels, MHTS
pieces that map to no chunk). Sentence splitting, the request's validation and the type quotas
are tested without a server."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from mhgraph.benchmark import load_questions
from mhgraph.eval.gold import contains_fact, normalise
from mhgraph.generate.candidate import NULL_ANSWER, Candidate
from mhgraph.generate.facts import MIN_COVERAGE, best_sentence, coverage, sentences
from mhgraph.generate.pool import ClaimPool, ClaimRecord
from mhgraph.generate.request import TYPE_SHARES, GenerateRequest, quotas
from mhgraph.generate.writers import (
    ANSWER_SYSTEM,
    COMPOSE_SYSTEM,
    DECOMPOSE_SYSTEM,
    PROMPT_VERSION,
    QUESTION_SYSTEM,
    WRITE_SYSTEM,
    mask,
)
from mhgraph.types import QUESTION_TYPES
from tests.conftest import SAMPLE, run_cli, wipe
from tests.scripted_llm_server import ScriptedServer, Step

ARTICLES = json.loads((SAMPLE / "corpus.json").read_text(encoding="utf-8"))
BY_TITLE = {a["title"]: a for a in ARTICLES}
OFFLINE_EXTRACTOR = "offline claim extractor v3 (spaCy, no language model)"


# -- fixtures and helpers ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def sample_claims(driver, settings, server, embedder):
    """The sample corpus ingested as 'sample' with its claim layer (the offline spaCy extractor),
    once for the module."""
    from mhgraph.claims.build import build_claims
    from mhgraph.claims.extract import OfflineClaimExtractor
    from mhgraph.ingest.pipeline import ingest_corpus

    wipe(driver, settings.neo4j_database)
    ingest_corpus(SAMPLE / "corpus.json", settings, driver, embedder=embedder, progress=False)
    build_claims(driver, settings.neo4j_database, "sample", OfflineClaimExtractor(), embedder, progress=False)
    return driver


@pytest.fixture(scope="module")
def offline(settings):
    """Settings for generating in process: corpus 'sample', no language model whatever the
    environment says."""
    return dataclasses.replace(settings, corpus="sample", llm_backend="none")


def _env(tmp_path: Path, **more: str) -> dict[str, str]:
    return {"MHGRAPH_CACHE_DIR": str(tmp_path / "cache"), "MHGRAPH_LLM_BACKEND": "none", "OPENAI_BASE_URL": "",
            "OPENAI_API_KEY": "", "MHGRAPH_LLM_MODEL": "", **more}


def _generate_cli(settings, tmp_path: Path, *args: str, env: dict[str, str] | None = None):
    return run_cli(settings, "generate", "--no-progress", *args, env=env or _env(tmp_path))


def _generate(settings, out: Path, **request):
    """The command's service in process (the same code the CLI calls): questions and summary."""
    from mhgraph.app.generation import generate_questions

    made = generate_questions(settings, GenerateRequest(**request), out)
    return json.loads(out.read_text(encoding="utf-8")), made.summary


def _summary_of(out: Path) -> dict:
    return json.loads(out.with_name(out.stem + ".summary.json").read_text(encoding="utf-8"))


def _claim_targets(driver, database: str, ids: list[str]) -> dict[str, tuple[str | None, str | None]]:
    """claim id -> (target key, target name), from the graph."""
    rows = driver.execute_query("UNWIND $ids AS id MATCH (k:Claim {id: id}) OPTIONAL MATCH (k)-[:TARGETS]->(t:Target) "
                                "RETURN k.id AS id, t.key AS key, t.name AS name", ids=ids, database_=database).records
    return {r["id"]: (r["key"], r["name"]) for r in rows}


def _chunks_by_title(driver, database: str, corpus: str) -> dict[str, list[str]]:
    rows = driver.execute_query("MATCH (c:Chunk {corpus: $corpus})-[:FROM_DOCUMENT]->(d:Document) "
                                "RETURN d.title AS title, collect(c.text) AS texts", corpus=corpus,
                                database_=database).records
    return {r["title"]: r["texts"] for r in rows}


def _when(text: str) -> datetime:
    return datetime.fromisoformat(text)


@pytest.fixture(scope="module")
def sample_run(sample_claims, settings, tmp_path_factory):
    """`mhgraph generate --corpus sample --out F --n 30`, offline, as a user runs it."""
    tmp = tmp_path_factory.mktemp("generate")
    out = tmp / "questions.json"
    result = _generate_cli(settings, tmp, "--corpus", "sample", "--out", str(out), "--n", "30")
    return result, out


# -- 1. the file -------------------------------------------------------------------------------
def test_generate_writes_verified_multihop_rag_questions(sample_run, sample_claims, settings) -> None:
    result, out = sample_run
    assert result.returncode == 0, result.stderr
    assert f"wrote 30 questions to {out} (offline templates, corpus 'sample')" in result.stdout
    questions = json.loads(out.read_text(encoding="utf-8"))
    loaded = load_questions(out)     # the benchmark's own reader takes the file as it is
    assert len(questions) == len(loaded) == 30
    assert [q.query for q in loaded] == [q["query"] for q in questions]
    assert {q.question_type for q in loaded} <= set(QUESTION_TYPES)
    assert len({q["id"] for q in questions}) == 30
    assert [q["id"] for q in questions] == [q.id for q in load_questions(out)]   # as eval's reports name them

    db = settings.neo4j_database
    chunks = _chunks_by_title(sample_claims, db, "sample")
    all_chunks = [t for texts in chunks.values() for t in texts]
    claim_ids = sorted({c for q in questions for c in q["claims"]})
    targets = _claim_targets(sample_claims, db, claim_ids)
    assert set(targets) == set(claim_ids)      # every claim named is a Claim node of the graph
    for q in questions:
        evidence = q["evidence_list"]
        assert q["hops"] == len(evidence)
        if q["question_type"] == "null_query":
            invented = q["null_check"]["invented"]
            assert q["answer"] == NULL_ANSWER and evidence == [] and q["hops"] == 0 and q["difficulty"] is None
            assert invented and invented in q["query"]
            assert not any(normalise(invented) in normalise(t) for t in all_chunks), invented
            assert not any(normalise(invented) in normalise(a["body"]) for a in ARTICLES)
            continue
        assert len(q["claims"]) == q["hops"] and 2 <= q["hops"] <= 4
        d = q["difficulty"]
        assert d["hops"] == q["hops"] and d["value"] == pytest.approx(q["hops"] - d["similarity"], abs=2e-4)
        for e in evidence:   # verbatim in a chunk of the article the evidence names; its metadata that article's
            article = BY_TITLE[e["title"]]
            assert any(contains_fact(t, e["fact"]) for t in chunks[e["title"]]), e["fact"]
            assert (e["source"], e["url"], e["author"]) == (article["source"], article["url"], article["author"])
            assert _when(e["published_at"]) == _when(article["published_at"])
        keys = [targets[c][0] for c in q["claims"]]
        if q["question_type"] == "inference_query":
            # the answer is the bridge-target all the claims name, and the question does not give it away
            assert len(set(keys)) == 1 and keys[0] and q["answer"] == targets[q["claims"][0]][1]
            assert normalise(q["answer"]) not in normalise(q["query"])
        elif q["question_type"] == "comparison_query":
            assert q["answer"] in ("Yes", "No")
            assert (len(set(keys)) == 1) == (q["answer"] == "Yes"), (q["query"], keys)
            # the default wording never names the bridge the question asks about
            assert not any(n and len(n) >= 3 and normalise(n) in normalise(q["query"])
                           for n in {targets[c][1] for c in q["claims"]}), q["query"]
        elif q["question_type"] == "temporal_query":
            dates = [_when(e["published_at"]) for e in evidence]
            if len(evidence) == 2:
                assert q["answer"] == ("Yes" if dates[0] < dates[1] else "No")
            else:
                assert q["answer"] == evidence[int(np.argmin(dates))]["source"]
    summary = _summary_of(out)
    checks = summary["checks"]
    assert checks["verbatim_share"] == 1.0 and checks["facts"] == checks["facts_verbatim"] > 0
    assert checks["questions_containing_answer"] == 0
    assert summary["questions"] == 30 and summary["made_by"]["strategy"] == "offline templates"
    assert summary["made_by"]["claims_by"] == [OFFLINE_EXTRACTOR]
    assert sum(row["written"] for row in summary["by_type"].values()) == 30
    assert not out.with_name(out.name + ".partial.jsonl").exists()


# -- 2. the same seed, the same file -----------------------------------------------------------
def test_the_same_seed_gives_the_same_file_and_another_seed_another(sample_run, offline, tmp_path) -> None:
    _, out = sample_run
    again = tmp_path / "again.json"
    _generate(offline, again, n=30)                  # in another process than the CLI's run
    assert again.read_bytes() == out.read_bytes()
    other = tmp_path / "other.json"
    questions, _ = _generate(offline, other, n=30, seed=1)
    assert other.read_bytes() != out.read_bytes()
    assert {q["query"] for q in questions} != {q["query"] for q in json.loads(out.read_text(encoding="utf-8"))}


def test_the_file_has_the_form_its_name_says(sample_run, offline, tmp_path) -> None:
    # JSON Lines for a .jsonl name, gzip for .gz: what eval, treehop train and reranker train read back
    from mhgraph.app.generation import generate_questions

    _, out = sample_run
    expected = [q.query for q in load_questions(out)]
    for name in ("questions.jsonl", "questions.ndjson.gz", "questions.json.gz"):
        made = tmp_path / name
        generate_questions(offline, GenerateRequest(n=30), made)
        assert [q.query for q in load_questions(made)] == expected, name
    assert len((tmp_path / "questions.jsonl").read_text(encoding="utf-8").splitlines()) == len(expected)


# -- 3. filters --------------------------------------------------------------------------------
def test_types_and_construction_filters(sample_claims, offline, tmp_path) -> None:
    questions, summary = _generate(offline, tmp_path / "mhts.json", n=6, types="inference", construction="mhts")
    assert questions and all(q["question_type"] == "inference_query" and q["construction"] == "mhts"
                             for q in questions)
    assert all(q["bridge"].startswith("cluster:") and q["tree"]["claims" if q["tree"]["level"] == 1 else "children"]
               for q in questions)
    assert list(summary["by_type"]) == ["inference_query"]
    assert len(questions) == 6 or any("mhts inference_query: wrote" in n for n in summary["notes"])


def test_mhts_uses_no_more_components_than_claims(sample_claims, offline, tmp_path) -> None:
    _, summary = _generate(offline, tmp_path / "mhts.json", n=4, types="inference", construction="mhts",
                           components=100000)
    note = next(n for n in summary["notes"] if n.startswith("MHTS: "))
    claims, components = map(int, re.match(r"MHTS: (\d+) claims clustered into (\d+) mixture", note).groups())
    assert components == claims


def test_hops_filter(sample_claims, offline, tmp_path) -> None:
    questions, summary = _generate(offline, tmp_path / "hops.json", n=8, hops="3-4")
    answerable = [q for q in questions if q["question_type"] != "null_query"]
    assert answerable and all(q["hops"] in (3, 4) and len(q["evidence_list"]) == q["hops"] for q in answerable)
    assert all(q["hops"] == 0 for q in questions if q["question_type"] == "null_query")   # no evidence, no hops
    short = {t: row for t, row in summary["by_type"].items() if row["written"] < row["asked"]}
    assert len(questions) == 8 or short
    for qtype in short:   # each type that fell short says so
        assert any(qtype in note and "the corpus allows no more" in note for note in summary["notes"])


# -- 4, 5. a request larger than the corpus; near-duplicates -----------------------------------
LARGE = ("--n", "5000", "--types", "temporal,null")


@pytest.fixture(scope="module")
def large_run(sample_claims, settings, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("large")
    out = tmp / "large.json"
    result = _generate_cli(settings, tmp, "--corpus", "sample", "--out", str(out), *LARGE)
    return result, out


def test_a_request_larger_than_the_corpus_writes_what_it_can(large_run) -> None:
    result, out = large_run
    assert result.returncode == 0, result.stderr
    questions = json.loads(out.read_text(encoding="utf-8"))
    summary = _summary_of(out)
    asked = quotas(GenerateRequest(n=5000, types="temporal,null"))
    assert sum(asked.values()) == 5000
    written = {t: sum(1 for q in questions if q["question_type"] == t) for t in ("temporal_query", "null_query")}
    assert 0 < len(questions) < 5000 and all(written.values())
    for (construction, qtype), n in asked.items():
        assert summary["by_type"][qtype] == {"asked": n, "written": written[qtype]}
        assert re.search(rf"^  {qtype} +{written[qtype]} of {n}$", result.stdout, re.MULTILINE), result.stdout
        note = f"{construction} {qtype}: wrote {written[qtype]} of {n}; the corpus allows no more with these settings"
        assert note in summary["notes"] and f"note: {note}" in result.stdout


def test_near_duplicates_are_dropped_at_the_threshold(large_run, offline, embedder, tmp_path) -> None:
    _, default_out = large_run
    default = json.loads(default_out.read_text(encoding="utf-8"))
    questions, summary = _generate(offline, tmp_path / "dups.json", n=5000, types="temporal,null",
                                   duplicate_threshold=0.5)
    removed = summary["checks"]["near_duplicates_removed"]
    assert len(questions) < len(default) and removed > 0
    assert summary["checks"]["rejected"]["near-duplicate of a question kept before"] == removed
    assert summary["made_by"]["embedding_model"] == embedder.model_name    # the corpus's embedder
    vectors = np.asarray(embedder.embed_documents([q["query"] for q in questions]), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    cosines = vectors @ vectors.T
    np.fill_diagonal(cosines, -1.0)
    assert float(cosines.max()) < 0.5 + 1e-4


# -- 6. bad input: one line, exit 1, nothing written or lost -----------------------------------
@contextmanager
def _read_only(folder: Path):
    """`folder` made read-only: its mode for a user; for root, whom modes do not stop, the
    immutable attribute too (chattr +i)."""
    folder.chmod(0o555)
    root = os.geteuid() == 0
    if root:
        subprocess.run(["chattr", "+i", str(folder)], check=True)
    try:
        assert not os.access(folder, os.W_OK), f"{folder} could not be made read-only on this machine"
        yield folder
    finally:
        if root:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
        folder.chmod(0o755)


def _listing(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize(("args", "message"), [
    (("--corpus", "nope"), r"no corpus 'nope' in the graph \(corpora: .*sample.*\)"),
    (("--corpus", "sample", "--hops", "2-6"), r"--hops: hops must be within 2-4 and low <= high, got 2-6"),
    (("--corpus", "sample", "--hops", "two"), r"--hops: expected LOW-HIGH, got 'two'"),
    (("--corpus", "sample", "--types", "inference,trivia"),
     r"--types: unknown question type trivia; choose from inference, comparison, temporal, null \(or with "
     r"'_query'\)"),
    (("--corpus", "sample", "--construction", "mhts", "--types", "comparison"),
     r"--construction: mhts writes inference questions only: include inference in --types"),
    (("--corpus", "sample", "--difficulty", "3-1"), r"--difficulty: difficulty low > high: 3.0-1.0"),
])
def test_bad_input_is_one_line_and_touches_nothing(sample_claims, settings, tmp_path, args, message) -> None:
    folder = tmp_path / "out"
    folder.mkdir()
    out = folder / "kept.json"
    out.write_text('["an earlier file"]\n')
    result = _generate_cli(settings, tmp_path, "--out", str(out), *args)
    assert result.returncode == 1 and result.stdout == ""
    assert re.fullmatch(rf"error: {message}\n", result.stderr), result.stderr
    assert _listing(folder) == {"kept.json": b'["an earlier file"]\n'}     # no summary, no partial file


def test_an_unwritable_output_is_refused_before_any_work(sample_claims, settings, tmp_path) -> None:
    missing = tmp_path / "no-such-folder" / "q.json"
    result = _generate_cli(settings, tmp_path, "--corpus", "sample", "--out", str(missing))
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == f"error: {missing}: folder {missing.parent} does not exist\n"
    assert not missing.parent.exists()
    (tmp_path / "a-file").write_text("x")
    inside = tmp_path / "a-file" / "q.json"
    result = _generate_cli(settings, tmp_path, "--corpus", "sample", "--out", str(inside))
    assert result.returncode == 1 and result.stderr == f"error: {inside}: {inside.parent} is a file, not a folder\n"
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "q.json").write_text('["an earlier file"]\n')
    with _read_only(locked):
        result = _generate_cli(settings, tmp_path, "--corpus", "sample", "--out", str(locked / "q.json"))
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == f"error: {locked / 'q.json'}: cannot write here (permission denied)\n"
    assert _listing(locked) == {"q.json": b'["an earlier file"]\n'}
    folder = tmp_path / "a-folder"
    folder.mkdir()
    result = _generate_cli(settings, tmp_path, "--corpus", "sample", "--out", str(folder))
    assert result.returncode == 1 and result.stderr.count("\n") == 1 and "is a folder" in result.stderr
    assert list(folder.iterdir()) == []


# -- 7. a corpus without its claim layer ---------------------------------------------------------
VELTRIX = [a for a in ARTICLES if "Veltrix" in a["title"]]    # three reports, three outlets, three days


def test_a_missing_claim_layer_is_refused_with_no_build_and_built_without(sample_claims, settings, embedder,
                                                                          offline, tmp_path) -> None:
    from mhgraph.app.generation import claim_layer_state, generate_questions
    from mhgraph.graph.context import GraphContext
    from mhgraph.ingest.pipeline import ingest_corpus

    assert len(VELTRIX) == 3
    path = tmp_path / "veltrix.json"
    path.write_text(json.dumps(VELTRIX), encoding="utf-8")
    ingest_corpus(path, settings, sample_claims, embedder=embedder, progress=False)   # no claims
    db = settings.neo4j_database
    graph = GraphContext.open(sample_claims, db, "veltrix")
    chunks = claim_layer_state(graph)["chunks"]
    assert claim_layer_state(graph) == {"chunks": chunks, "done": 0, "extractors": [], "claims": 0}

    out = tmp_path / "veltrix-questions.json"
    refused = _generate_cli(settings, tmp_path, "--corpus", "veltrix", "--out", str(out), "--n", "4", "--no-build")
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr == (f"error: corpus 'veltrix' has no complete claim layer (0 of {chunks} chunks done): run "
                              "'mhgraph claims build --corpus veltrix', or leave out --no-build\n")
    assert not out.exists() and claim_layer_state(graph)["done"] == 0

    said: list[str] = []
    made = generate_questions(dataclasses.replace(offline, corpus="veltrix"),
                              GenerateRequest(n=4, types="inference,comparison,temporal"), out, status=said.append)
    assert f"building the claim layer of 'veltrix' ({chunks} chunks to do)" in said
    state = claim_layer_state(graph)
    assert state["done"] == state["chunks"] == chunks and state["claims"] > 0
    assert state["extractors"] == [OFFLINE_EXTRACTOR]
    questions = json.loads(out.read_text(encoding="utf-8"))
    assert questions and made.summary["corpus"] == "veltrix" and "claim_layer" in made.summary["seconds"]
    assert {e["title"] for q in questions for e in q["evidence_list"]} <= {a["title"] for a in VELTRIX}
    veltrix_chunks = _chunks_by_title(sample_claims, db, "veltrix")
    assert all(any(contains_fact(t, e["fact"]) for t in veltrix_chunks[e["title"]])
               for q in questions for e in q["evidence_list"])
    sample_state = claim_layer_state(GraphContext.open(sample_claims, db, "sample"))
    assert sample_state["done"] == sample_state["chunks"]      # the other corpus untouched


# -- 8, 9. the model's path: a scripted OpenAI-compatible server ---------------------------------
INVENTED_PIECE = "Zorblax Quentor painted the lunar surface green during Februarius."
JOIN = " || "


class ScriptedModel:
    """Replies as a model that does what each prompt asks (ModelWriter's JSON replies), built from
    the prompt alone, so the same prompt gets the same reply in every run; from call `fail_from` on
    (1-based), or to every prompt of the system prompt `fail_on`, HTTP 500 instead. The MHTS
    decomposition adds one invented piece that no chunk holds, and the first MHTS question it is
    asked for (that claim, in every run) comes back with an empty answer."""

    def __init__(self, targets: dict[str, str]) -> None:
        self.targets = targets           # claim text (whitespace-normalised) -> its target's name
        self.calls = 0
        self.fail_from: int | None = None
        self.fail_on: str | None = None
        self.stall_from: int | None = None   # from this call on, no reply for a minute (a user presses Ctrl-C)
        self.no_answer_for: str | None = None

    @staticmethod
    def _without(text: str, answer: str) -> str:
        words = [re.escape(w) for w in re.findall(r"\w+", answer) if len(w) > 1]
        return re.sub(rf"\b(?:{'|'.join(words)})\b", "it", text, flags=re.IGNORECASE) if words else text

    def __call__(self, body: dict) -> Step:
        self.calls += 1
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        if (self.fail_from is not None and self.calls >= self.fail_from) or system == self.fail_on:
            return Step(status=500, error="the model crashed")
        if self.stall_from is not None and self.calls >= self.stall_from:
            return Step(status=500, error="too late", delay=60)
        if system == WRITE_SYSTEM:     # the task (its answer, or the invented name), then the facts
            task, facts_text = user.split("\nFacts:\n", 1)
            invented = re.search(r"about (.+), an entity that does not exist", task)
            answer = re.search(r"answer is (.+?)\.(?: It must|$)", task)
            assert invented or answer, task
            facts = [re.sub(r"^\d+\. (\([^)]*\) )?", "", line) for line in facts_text.splitlines()]
            gists = [" ".join(self._without(f, answer.group(1) if answer else "").split()[:12]) for f in facts]
            if invented:
                reply = {"question": f"What did the reports say about {invented.group(1)}, given that {gists[0]}?"}
            else:
                reply = {"question": f"Which one is meant, given that {' and that '.join(gists)}?"}
        elif system == COMPOSE_SYSTEM:
            claims = [re.sub(r"^\d+\. ", "", line) for line in user.split("Claims:\n", 1)[1].splitlines()]
            reply = {"claim": JOIN.join(claims)}
        elif system == QUESTION_SYSTEM:
            pieces = user.removeprefix("Multi-hop claim: ").split(JOIN)
            answer = self.targets[" ".join(pieces[0].split())]
            self.no_answer_for = self.no_answer_for or user
            reply = {"question": f"Who or what is it, given that {'; '.join(self._without(p, answer) for p in pieces)}?",
                     "answer": "" if user == self.no_answer_for else answer}
        elif system == DECOMPOSE_SYSTEM:
            reply = {"pieces": [*user.removeprefix("Claim: ").split(JOIN), INVENTED_PIECE]}
        elif system == ANSWER_SYSTEM:
            reply = {"answer": NULL_ANSWER}
        else:
            raise AssertionError(f"a prompt the script does not know: {system[:60]}")
        return Step(json.dumps(reply))


@pytest.fixture(scope="module")
def scripted_model(sample_claims, settings):
    rows = sample_claims.execute_query("MATCH (k:Claim {corpus: 'sample'})-[:TARGETS]->(t:Target) "
                                       "RETURN k.text AS text, t.name AS name", database_=settings.neo4j_database)
    model = ScriptedModel({" ".join(r["text"].split()): r["name"] for r in rows.records})
    endpoint = ScriptedServer(default=model)
    yield model, endpoint
    endpoint.close()


def _model_settings(offline, endpoint: ScriptedServer, tmp: Path):
    """In process, the settings the environment of `_model_env` gives the CLI."""
    return dataclasses.replace(offline, llm_backend="openai", openai_base_url=endpoint.base_url, openai_api_key=None,
                               llm_model="scripted", llm_max_retries=0, llm_timeout=10.0, cache_dir=tmp / "cache")


def _model_env(endpoint: ScriptedServer, tmp: Path) -> dict[str, str]:
    return _env(tmp, OPENAI_BASE_URL=endpoint.base_url, MHGRAPH_LLM_BACKEND="", MHGRAPH_LLM_MODEL="scripted",
                MHGRAPH_LLM_MAX_RETRIES="0", MHGRAPH_LLM_TIMEOUT="10")


MODEL_REQUEST = {"types": "inference,null", "n": 6, "answer_check": 4}
MODEL_ARGS = ("--corpus", "sample", "--types", "inference,null", "--n", "6", "--answer-check", "4", "--no-cache")
FAIL_FROM = 3      # the model answers two calls, then fails


@dataclasses.dataclass
class ModelRuns:
    failed: subprocess.CompletedProcess   # the model fails at call FAIL_FROM
    partial_lines: list[str]              # the partial file after it
    written_after_failure: bool           # whether the questions file was there after it
    failed_requests: list[dict]
    resumed: subprocess.CompletedProcess  # the same command, the model mended
    resumed_requests: list[dict]
    out: Path
    uninterrupted: Path                   # the same request, run once without a failure


@pytest.fixture(scope="module")
def model_runs(scripted_model, offline, settings, tmp_path_factory) -> ModelRuns:
    model, endpoint = scripted_model
    tmp = tmp_path_factory.mktemp("model")
    out = tmp / "model-questions.json"
    env = _model_env(endpoint, tmp)
    model.fail_from, model.calls = FAIL_FROM, 0
    endpoint.requests.clear()
    failed = _generate_cli(settings, tmp, *MODEL_ARGS, "--out", str(out), env=env)
    partial = out.with_name(out.name + ".partial.jsonl")
    lines = partial.read_text(encoding="utf-8").splitlines() if partial.exists() else []
    written_after_failure = out.exists()
    failed_requests = list(endpoint.requests)
    model.fail_from = None
    endpoint.requests.clear()
    resumed = _generate_cli(settings, tmp, *MODEL_ARGS, "--out", str(out), env=env)
    resumed_requests = list(endpoint.requests)
    uninterrupted = tmp / "uninterrupted.json"
    _generate(_model_settings(offline, endpoint, tmp), uninterrupted, **MODEL_REQUEST)
    return ModelRuns(failed, lines, written_after_failure, failed_requests, resumed, resumed_requests, out,
                     uninterrupted)


def test_ctrl_c_keeps_what_was_made_and_says_how_to_resume(scripted_model, settings, tmp_path) -> None:
    import signal
    import sys
    import time

    from tests.conftest import cli_env

    model, endpoint = scripted_model
    out = tmp_path / "stopped.json"
    partial = out.with_name(out.name + ".partial.jsonl")
    model.stall_from, model.calls = FAIL_FROM, 0
    try:
        proc = subprocess.Popen([sys.executable, "-m", "mhgraph.cli", "generate", "--no-progress", *MODEL_ARGS,
                                 "--out", str(out)], env={**cli_env(settings), **_model_env(endpoint, tmp_path)},
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 240
        while model.calls < FAIL_FROM and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        assert model.calls >= FAIL_FROM, proc.communicate(timeout=30)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        model.stall_from = None
    assert proc.returncode == 130, stderr
    assert stderr.rstrip().splitlines()[-1] == (f"interrupted: the decisions made so far are kept in {partial}; run "
                                                "the same command again to resume")
    assert len(partial.read_text(encoding="utf-8").splitlines()) == 1 + (FAIL_FROM - 1) and not out.exists()


def test_a_failing_model_keeps_what_was_made_and_the_same_command_resumes(model_runs) -> None:
    runs = model_runs
    out, partial = runs.out, runs.out.with_name(runs.out.name + ".partial.jsonl")
    failed = runs.failed
    assert failed.returncode == 1 and failed.stdout == ""
    assert failed.stderr.count("\n") == 1 and failed.stderr.startswith("error: the model failed after ")
    assert "HTTP 500" in failed.stderr and str(partial) in failed.stderr
    assert failed.stderr.rstrip().endswith("run the same command again to resume")
    # the two answered calls made two decisions, kept in the partial file under its header
    assert len(runs.failed_requests) == FAIL_FROM and len(runs.partial_lines) == 1 + (FAIL_FROM - 1)
    assert "fingerprint" in json.loads(runs.partial_lines[0])
    decided = [json.loads(line) for line in runs.partial_lines[1:]]
    assert all(d["record"] is not None or d["reason"] for d in decided)
    assert not runs.written_after_failure

    assert runs.resumed.returncode == 0, runs.resumed.stderr
    summary = _summary_of(out)
    assert summary["resumed_decisions"] == len(decided) > 0
    assert not partial.exists()
    questions = json.loads(out.read_text(encoding="utf-8"))
    kept_before = [d["record"]["query"] for d in decided if d["record"]]
    assert kept_before and set(kept_before) <= {q["query"] for q in questions}
    # what was decided is not asked again (no response cache: --no-cache)
    asked_before = {json.dumps(r["messages"]) for r in runs.failed_requests[:FAIL_FROM - 1]}
    assert not asked_before & {json.dumps(r["messages"]) for r in runs.resumed_requests}
    assert summary["model_usage"]["calls"] == len(runs.resumed_requests)
    # stopped and resumed, the file is the one a run without the failure writes
    assert out.read_bytes() == runs.uninterrupted.read_bytes()


def test_the_model_path_is_labelled_and_unmapped_pieces_are_dropped(model_runs) -> None:
    out = model_runs.out
    assert model_runs.resumed.returncode == 0, model_runs.resumed.stderr
    questions = json.loads(out.read_text(encoding="utf-8"))
    summary = _summary_of(out)
    assert summary["strategy"] == "model openai:scripted"
    for q in questions:
        assert q["made_by"]["strategy"] == "model" and q["made_by"]["model"] == "openai:scripted"
        assert q["made_by"]["prompt_version"] == PROMPT_VERSION
        assert q["hops"] == len(q["evidence_list"]) and q["answer"].strip()
    usage = summary["model_usage"]
    assert usage["calls"] > 0 and usage["failures"] == 0 and usage["prompt_tokens"] > 0
    # the answerability check: the scripted model abstains, so it is right on the null questions only
    answerable = summary["checks"]["answerable"]
    by_type: dict[str, int] = {}
    for q in questions:
        by_type[q["question_type"]] = by_type.get(q["question_type"], 0) + 1
    per_type = max(1, 4 // len(by_type))
    assert answerable["model"] == "openai:scripted"
    assert answerable["sample"] == sum(min(per_type, n) for n in by_type.values())
    assert answerable["answered_right"] == min(per_type, by_type.get("null_query", 0))
    asked = [r for r in model_runs.resumed_requests if r["messages"][0]["content"] == ANSWER_SYSTEM]
    assert len(asked) == answerable["sample"]
    # MHTS: the invented piece maps to no chunk and is dropped; hops count the mapped pieces only
    trees = [q for q in questions if q["construction"] == "mhts"]
    assert trees
    for q in trees:
        assert q["pieces"] == {"decomposed": len(q["claims"]) + 1, "mapped": len(q["claims"])}
        assert q["hops"] == q["pieces"]["mapped"] == len(q["evidence_list"]) < q["pieces"]["decomposed"]
        assert not any("Zorblax" in e["fact"] for e in q["evidence_list"])
        assert normalise(q["answer"]) not in normalise(q["query"])
    assert summary["checks"]["verbatim_share"] == 1.0
    assert summary["checks"]["rejected"].get("empty answer") == 1    # the MHTS reply without an answer


def test_a_model_failing_in_the_answerability_check_keeps_the_questions(scripted_model, offline, tmp_path) -> None:
    from mhgraph.app.generation import generate_questions
    from mhgraph.errors import MhgraphError

    model, endpoint = scripted_model
    settings = _model_settings(offline, endpoint, tmp_path)
    request = GenerateRequest(types="null", n=2, answer_check=2)
    out = tmp_path / "checked.json"
    partial = out.with_name(out.name + ".partial.jsonl")
    model.fail_from, model.fail_on = None, ANSWER_SYSTEM
    try:
        with pytest.raises(MhgraphError) as failed:
            generate_questions(settings, request, out, cache=False)
    finally:
        model.fail_on = None
    message = str(failed.value)
    assert message.startswith("the model failed in the answerability check (") and "HTTP 500" in message
    assert message.endswith(f"the questions are kept in {partial}: run the same command again to resume")
    assert not out.exists() and len(partial.read_text(encoding="utf-8").splitlines()) == 1 + 2
    made = generate_questions(settings, request, out, cache=False)
    assert made.summary["resumed_decisions"] == 2 and made.summary["checks"]["answerable"]["sample"] == 2
    assert len(json.loads(out.read_text(encoding="utf-8"))) == 2 and not partial.exists()


# -- 10. without a server ----------------------------------------------------------------------
def test_sentences_keep_abbreviations_and_are_exact_slices() -> None:
    text = ('Veltrix and U.S. safety regulators announced the recall on Monday. Mr. Okafor said the firm would '
            'appeal.  J. R. Hartley wrote the report for Acme Inc. in London. "We will fix it," said Dr. Lee. '
            'Shares fell 3.5 per cent to $1.2 billion!\nA line without a stop\nIs it over? It ended at 5 p.m. on '
            'Friday.')
    found = sentences(text)
    assert [s.text for s in found] == [
        "Veltrix and U.S. safety regulators announced the recall on Monday.",
        "Mr. Okafor said the firm would appeal.",
        "J. R. Hartley wrote the report for Acme Inc. in London.",
        '"We will fix it," said Dr. Lee.',
        "Shares fell 3.5 per cent to $1.2 billion!",
        "A line without a stop",
        "Is it over?",
        "It ended at 5 p.m. on Friday.",
    ]
    assert all(text[s.start:s.end] == s.text for s in found)
    assert [s.text for s in sentences('He said: "Stop." She left.')] == ['He said: "Stop."', "She left."]
    assert sentences("  \n ") == []


def test_best_sentence_picks_the_sentence_that_holds_the_claim() -> None:
    chunk = ("Veltrix Robotics said on Tuesday it would recall 62,000 Atlas Home robots. Its shares slid 18 per cent "
             "on Wednesday, according to Global Finance Wire. The company blamed Corvane Cells for a defective batch.")
    found = sentences(chunk)
    claim = "Veltrix Robotics' shares slid 18 per cent on Wednesday."      # the claim restates "Its"
    best = best_sentence(claim, found)
    assert best is not None and best.text == found[1].text and chunk[best.start:best.end] == best.text
    assert coverage(claim, best.text) >= MIN_COVERAGE
    assert best_sentence("Veltrix Robotics blamed Corvane Cells for a defective batch.", found).text == found[2].text
    assert best_sentence("Halcyon Therapeutics raised its forecast for Renavex.", found) is None
    assert best_sentence("Shares slid.", sentences("Shares slid. Shares slid 18 per cent.")).text == \
        "Shares slid 18 per cent."     # a sentence too short to be a fact is passed over


def test_a_sentence_found_in_two_articles_is_no_fact() -> None:
    boilerplate = "Sign up for the morning newsletter to get every story in your inbox."
    chunks = {"c1": f"Veltrix Robotics recalled 62,000 Atlas Home robots on Tuesday. {boilerplate}",
              "c2": f"Veltrix Robotics shares slid 18 per cent on Wednesday. {boilerplate}",
              "c3": "Veltrix Robotics recalled 62,000 Atlas Home robots on Tuesday, the company said."}
    documents = {"c1": "d1", "c2": "d2", "c3": "d1"}      # c3: a second chunk of d1 overlapping c1
    claims = {f"k{i}": ClaimRecord(f"k{i}", text, chunk, documents[chunk], "veltrix", "Veltrix", None, None)
              for i, (text, chunk) in enumerate([
                  ("Veltrix Robotics recalled 62,000 Atlas Home robots on Tuesday.", "c1"),
                  ("Sign up for the morning newsletter to get every story.", "c2"),
                  ("Veltrix Robotics shares slid 18 per cent on Wednesday.", "c2")])}
    pool = ClaimPool("c", {}, list(chunks), chunks, documents, np.zeros((3, 2)), claims)
    assert pool.fact("k0") == "Veltrix Robotics recalled 62,000 Atlas Home robots on Tuesday."   # d1 only
    assert pool.repeated(boilerplate) and pool.fact("k1") is None
    assert pool.fact("k2") == "Veltrix Robotics shares slid 18 per cent on Wednesday."


def test_mask_replaces_whole_names_only() -> None:
    assert mask("It has a USB-C port and a USB port; the USB's plug.", "USB", "this organisation") == \
        "It has a USB-C port and a this organisation port; this organisation's plug."
    assert mask("Altman and Brockman met; Greg Brockman's view.", "Greg Brockman", "this person", surname=True) == \
        "Altman and this person met; this person's view."
    assert mask("Sen. Brockmanson spoke.", "Brockman", "this person") == "Sen. Brockmanson spoke."


def test_request_takes_the_types_by_either_name() -> None:
    assert GenerateRequest(types="inference_query,null").types == ("inference", "null")


@pytest.mark.parametrize(("values", "field", "message"), [
    ({"hops": "2-6"}, "hops", "hops must be within 2-4 and low <= high, got 2-6"),
    ({"hops": "3-2"}, "hops", "hops must be within 2-4 and low <= high, got 3-2"),
    ({"hops": "1-1"}, "hops", "hops must be within 2-4 and low <= high, got 1-1"),
    ({"hops": "two"}, "hops", "expected LOW-HIGH, got 'two'"),
    ({"types": "inference,trivia"}, "types",
     "unknown question type trivia; choose from inference, comparison, temporal, null"),
    ({"types": " , "}, "types", "unknown question type (none)"),
    ({"difficulty": "3-1"}, "difficulty", "difficulty low > high"),
    ({"construction": "mhts", "types": "null"}, "construction", "mhts writes inference questions only"),
    ({"construction": "tree"}, "construction", "Input should be 'multihop-rag', 'mhts' or 'both'"),
    ({"n": 0}, "n", "greater than or equal to 1"),
    ({"duplicate_threshold": 0}, "duplicate_threshold", "greater than 0"),
    ({"duplicate_threshold": 1.5}, "duplicate_threshold", "less than or equal to 1"),
    ({"theta": 0}, "theta", "greater than 0"),
    ({"coherence": 1}, "coherence", "less than 1"),
    ({"coherence": -0.5}, "coherence", "greater than or equal to 0"),
    ({"grouping": "cluster"}, "grouping", "Input should be 'story' or 'random'"),
    ({"seeds": 3}, "seeds", "Extra inputs are not permitted"),
])
def test_request_rejects_bad_values_naming_the_field(values, field, message) -> None:
    with pytest.raises(ValidationError) as raised:
        GenerateRequest(**values)
    error = raised.value.errors()[0]
    assert error["loc"][0] == field and message in error["msg"]


def test_request_reads_ranges_and_types() -> None:
    request = GenerateRequest(types="null, inference,null", hops="3", difficulty="1.5-2.5")
    assert request.types == ("null", "inference") and request.hops == (3, 3) and request.difficulty == (1.5, 2.5)
    assert request.question_types == ("null_query", "inference_query")
    # either bound may be negative: with a large similarity weight D is below 0
    assert GenerateRequest(difficulty="-20--10").difficulty == (-20.0, -10.0)
    assert GenerateRequest(difficulty="-5-0.5").difficulty == (-5.0, 0.5)
    assert GenerateRequest(difficulty="-3").difficulty == (-3.0, -3.0)
    for bad in ("2-", "1-2-3", "low-high"):
        with pytest.raises(ValidationError, match="expected LOW-HIGH"):
            GenerateRequest(difficulty=bad)


@pytest.mark.parametrize("n", [1, 2, 7, 30, 99, 500, 2556, 5000])
@pytest.mark.parametrize(("types", "construction"), [
    ("inference,comparison,temporal,null", "both"), ("inference,comparison,temporal,null", "multihop-rag"),
    ("temporal,null", "both"), ("inference", "mhts"), ("inference,null", "mhts"), ("comparison,inference", "both"),
])
def test_quotas_sum_to_n_and_follow_the_type_shares(n, types, construction) -> None:
    request = GenerateRequest(n=n, types=types, construction=construction)
    asked = quotas(request)
    assert sum(asked.values()) == n and all(v >= 0 for v in asked.values())
    if construction == "mhts":     # MHTS writes inference questions only: all of n goes there
        assert {k: v for k, v in asked.items() if v} == {("mhts", "inference_query"): n}
        return
    assert all(c == "multihop-rag" or t == "inference_query" for c, t in asked)   # MHTS: inference only
    by_type: dict[str, int] = {}
    for (_, t), v in asked.items():
        by_type[t] = by_type.get(t, 0) + v
    weights = {t: TYPE_SHARES[t] for t in request.question_types}
    for t, v in by_type.items():
        assert abs(v - n * weights[t] / sum(weights.values())) < 1 + 1e-9   # largest remainder: within one
    if construction == "both" and "inference" in types:
        split = asked[("multihop-rag", "inference_query")] - asked[("mhts", "inference_query")]
        assert abs(split) <= 1


def test_quotas_at_the_published_total_are_the_published_counts() -> None:
    asked = quotas(GenerateRequest(n=sum(TYPE_SHARES.values()), construction="multihop-rag"))
    assert {t: asked[("multihop-rag", t)] for t in TYPE_SHARES} == TYPE_SHARES


def test_the_partial_file_resumes_only_its_own_request(tmp_path: Path) -> None:
    from mhgraph.generate.pipeline import Outcome, Progress

    path = tmp_path / "q.json.partial.jsonl"
    first = Progress(path, "fp-a")
    first.add(Outcome("k1", "multihop-rag", "inference_query", None, "near-duplicate of a question kept before"))
    first.close(finished=False)
    again = Progress(path, "fp-a")                  # the same request: its decisions come back
    assert not again.replaced and set(again.done) == {"k1"}
    again.close(finished=False)
    other = Progress(path, "fp-b")                  # another request: started afresh, and said so
    assert other.replaced and other.done == {}
    other.close(finished=False)
    assert path.read_text(encoding="utf-8").splitlines() == ['{"fingerprint": "fp-b"}']
    path.write_text("{not json\n", encoding="utf-8")   # an unreadable header is no crash
    broken = Progress(path, "fp-b")
    assert broken.replaced and broken.done == {}
    broken.close(finished=True)
    assert not path.exists()


class CarelessModel:
    """Writes questions that break their form: inference questions that say where the answer is, and
    comparison questions that either are no yes/no question, or name a report's entity, or answer themselves
    after the question mark."""

    def __init__(self) -> None:
        self.calls = 0

    @staticmethod
    def _without_names(text: str) -> str:   # capitalised words out, so the answer is not contained
        return re.sub(r"\b[A-Z]\w*", "it", text)

    def __call__(self, body: dict) -> Step:
        self.calls += 1
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        if system == ANSWER_SYSTEM:
            return Step(json.dumps({"answer": NULL_ANSWER}))
        assert system == WRITE_SYSTEM, system[:60]
        task, facts_text = user.split("\nFacts:\n", 1)
        fact = re.sub(r"^\d+\. (\([^)]*\) )?", "", facts_text.splitlines()[0])
        if task.startswith("Write a question whose answer is"):
            question = f"Which one is meant, given that {self._without_names(fact)} The answer is in the first report."
        elif self.calls % 3 == 0:
            question = f"Do these reports concern the same entity as this one: {fact}? No, they do not."
        elif self.calls % 2:   # without its names, so that only the form is wrong
            question = f"Which is it, given that {self._without_names(fact)}?"
        else:
            question = f"Do these reports concern the same entity as this one: {fact}?"
        return Step(json.dumps({"question": question}))


def test_questions_that_break_their_form_are_rejected(sample_claims, offline, tmp_path) -> None:
    endpoint = ScriptedServer(default=CarelessModel())
    try:
        questions, summary = _generate(_model_settings(offline, endpoint, tmp_path), tmp_path / "careless.json",
                                       types="inference,comparison", construction="multihop-rag", n=6,
                                       answer_check=0)
    finally:
        endpoint.close()
    rejected = summary["checks"]["rejected"]
    assert rejected.get("the question states its answer", 0) >= 1
    assert rejected.get("a yes/no answer to a question that is not a yes/no question", 0) >= 1
    assert rejected.get("the question goes on after its question mark", 0) >= 1
    assert not [q for q in questions if q["question_type"] == "inference_query"]   # each one stated its answer
    for q in questions:     # a comparison kept is a yes/no question naming none of its reports' targets
        assert q["query"].startswith("Do ")
        targets = _claim_targets(sample_claims, offline.neo4j_database, q["claims"])
        assert not any(t and t[1] and t[1].lower() in q["query"].lower() for t in targets.values())


def test_a_flat_corpus_without_metadata_skips_temporal_with_a_note(sample_claims, settings, embedder, offline,
                                                                   tmp_path) -> None:
    """The flat Title:/Passage: form has titles only: no dates (temporal questions are skipped and
    the summary says so) and no sources (reports are named by order); the other types work."""
    from mhgraph.ingest.pipeline import ingest_corpus

    flat = tmp_path / "sample-flat.txt"
    flat.write_text("".join(f"Title: {a['title']}\nPassage: {a['body']}\n<endofpassage>\n" for a in ARTICLES),
                    encoding="utf-8")
    ingest_corpus(flat, dataclasses.replace(settings, corpus="sample-flat"), sample_claims, embedder=embedder,
                  progress=False)
    out = tmp_path / "flat-questions.json"
    questions, summary = _generate(dataclasses.replace(offline, corpus="sample-flat"), out, n=30, seed=1)
    types = {q["question_type"] for q in questions}
    assert "temporal_query" not in types and {"inference_query", "comparison_query", "null_query"} <= types
    assert summary["by_type"]["temporal_query"]["written"] == 0
    assert any(n.startswith("temporal: skipped") for n in summary["notes"])
    assert any(n.startswith("no sources in this corpus") for n in summary["notes"])
    assert summary["checks"]["verbatim_share"] == 1.0
    for q in questions:
        assert " article" not in q["query"]          # no outlet to name: "a report", "another report"
        for e in q["evidence_list"]:
            assert e["title"] in BY_TITLE and e["fact"] in BY_TITLE[e["title"]]["body"]
            assert e["source"] == e["published_at"] == e["url"] == ""


def test_a_names_kind_depends_on_its_own_context_not_on_earlier_calls() -> None:
    """A candidate's kind (and so its question's wording) is the same whatever was asked before it: a run that
    stops one type early words the next type's questions as a run that went on would."""
    from types import SimpleNamespace

    from mhgraph.generate.kinds import EntityKinds

    def nlp(text: str):   # a recogniser whose label depends on the sentence, as spaCy's does
        label = "ORG" if "shares" in text else "PERSON"
        return SimpleNamespace(ents=[SimpleNamespace(text="Jordan", label_=label)])

    first, second = EntityKinds(nlp), EntityKinds(nlp)
    context = "Jordan's shares fell after the company said its sales slowed."
    assert first("Jordan", context) == "organisation"
    assert second("Jordan", "Jordan scored twice.") == "person"     # another context first
    assert second("Jordan", context) == "organisation"             # no answer is carried over


def test_a_names_kind_is_its_claims_majority_reading() -> None:
    from types import SimpleNamespace

    from mhgraph.generate.kinds import EntityKinds

    def nlp(text: str):   # "Jordan" read as a place where the sentence says "in", else as a person
        return SimpleNamespace(ents=[SimpleNamespace(text="Jordan", label_="GPE" if " in " in text else "PERSON")])

    kinds = EntityKinds(nlp, sentences={"Jordan": ["Jordan scored.", "Jordan won in Lyon.", "Jordan retired."]})
    assert kinds("Jordan", "Jordan won in Lyon.") == "person"           # two of three, whatever sentence is at hand
    split = EntityKinds(nlp, sentences={"Jordan": ["Jordan scored.", "Jordan won in Lyon."]})
    assert split("Jordan") == "entity"                                  # no majority: vaguer, not wrong
    assert kinds("Solenne Labs", "Solenne Labs said.") == "organisation"   # its last word says so


def test_story_grouping_joins_the_articles_of_one_story_and_random_grouping_any() -> None:
    """Four articles name one target, two stories apart (chunk embeddings): story grouping pairs an
    article with the other article of its story, whichever is drawn first; random grouping pairs any two."""
    from mhgraph.generate.groups import BridgeGroups

    texts = {"c1": "Veltrix Robotics recalled 62,000 Atlas Home robots on Tuesday.",
             "c2": "Veltrix Robotics opened a research campus in Lisbon last spring.",
             "c3": "Veltrix Robotics said the recall of its Atlas Home robots would cost millions.",
             "c4": "Veltrix Robotics hired forty engineers for its new Lisbon campus."}
    documents = {c: "d" + c[1:] for c in texts}
    # unit rows: story A (the recall) is c1 and c3, story B (the campus) c2 and c4
    vectors = np.asarray([[1, 0], [0, 1], [0.96, 0.28], [0.28, 0.96]], dtype=np.float32)
    claims = {"k" + c[1:]: ClaimRecord("k" + c[1:], text, c, documents[c], "veltrix", "Veltrix Robotics", None, None)
              for c, text in texts.items()}
    pool = ClaimPool("c", {}, list(texts), texts, documents, vectors, claims, by_target={"veltrix": sorted(claims)})

    def kinds(name: str, context: str | None = None) -> str:
        return "organisation"

    def first_pair(seed: int, grouping: str) -> tuple[str, ...]:
        return next(BridgeGroups(pool, kinds, seed, (2, 2), grouping=grouping, coherence=0.5).inference()).claims

    stories = {("k1", "k3"), ("k2", "k4")}
    story = {first_pair(seed, "story") for seed in range(12)}
    assert story == stories                                  # both stories drawn, never a pair across them
    assert {first_pair(seed, "random") for seed in range(12)} - stories   # random grouping crosses stories


def test_story_grouping_makes_no_group_of_articles_that_share_only_a_name() -> None:
    """Two articles name Veltrix but tell unrelated stories (orthogonal chunks); two others name Corvane and tell
    one. Under the story floor (the 0.9 quantile of the corpus's random chunk pairs) only Corvane makes a group;
    with no floor Veltrix does too."""
    from mhgraph.generate.groups import BridgeGroups

    texts = {"c1": "Veltrix Robotics recalled 62,000 Atlas Home robots on Tuesday.",
             "c2": "Veltrix Robotics sponsored a marathon in Lisbon last spring.",
             "c3": "Corvane Cells shipped a defective batch of batteries to carmakers.",
             "c4": "Corvane Cells said the defective battery batch would cost it millions."}
    documents = {c: "d" + c[1:] for c in texts}
    vectors = np.asarray([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 1]], dtype=np.float32)
    targets = {"c1": "veltrix", "c2": "veltrix", "c3": "corvane", "c4": "corvane"}
    names = {"veltrix": "Veltrix Robotics", "corvane": "Corvane Cells"}
    claims = {"k" + c[1:]: ClaimRecord("k" + c[1:], text, c, documents[c], targets[c], names[targets[c]], None, None)
              for c, text in texts.items()}
    by_target = {"veltrix": ["k1", "k2"], "corvane": ["k3", "k4"]}
    pool = ClaimPool("c", {}, list(texts), texts, documents, vectors, claims, by_target=by_target)

    def kinds(name: str, context: str | None = None) -> str:
        return "organisation"

    def groups(coherence: float) -> set[tuple[str, ...]]:
        return {c.claims for c in BridgeGroups(pool, kinds, 0, (2, 2), coherence=coherence).inference()}

    assert groups(0.9) == {("k3", "k4")}
    assert groups(0.0) == {("k1", "k2"), ("k3", "k4")}


def test_story_grouping_dates_a_temporal_group_by_its_story_not_by_the_first_article_of_each_day() -> None:
    """A temporal group needs articles of different days: story grouping looks at every dated article and keeps
    the days apart, so an off-story article published the same day as a story's article does not hide it."""
    from datetime import datetime

    from mhgraph.generate.groups import BridgeGroups
    from mhgraph.generate.pool import Document

    texts = {"c1": "Veltrix Robotics sponsored a marathon in Lisbon on Monday.",
             "c2": "Veltrix Robotics recalled 62,000 Atlas Home robots on Monday.",
             "c3": "Veltrix Robotics said the recall of its Atlas Home robots would cost millions."}
    chunk_documents = {c: "d" + c[1:] for c in texts}
    days = {"d1": datetime(2023, 10, 2), "d2": datetime(2023, 10, 2), "d3": datetime(2023, 10, 5)}
    documents = {d: Document(d, d, None, None, None, when, "Source " + d) for d, when in days.items()}
    vectors = np.asarray([[0, 1], [1, 0], [1, 0]], dtype=np.float32)   # d1 off the story of d2 and d3
    claims = {"k" + c[1:]: ClaimRecord("k" + c[1:], text, c, chunk_documents[c], "veltrix", "Veltrix Robotics", None,
                                       None) for c, text in texts.items()}
    pool = ClaimPool("c", documents, list(texts), texts, chunk_documents, vectors, claims,
                     by_target={"veltrix": sorted(claims)})

    def kinds(name: str, context: str | None = None) -> str:
        return "organisation"

    for seed in range(8):
        groups = [c.claims for c in BridgeGroups(pool, kinds, seed, (2, 2), coherence=0.7).temporal()]
        assert [sorted(g) for g in groups] == [["k2", "k3"]]      # never d1 and d2 (one day), never d1 (off-story)


def _described_pool():
    """Three articles with headlines and sources: two on Veltrix's recall, one on Corvane (same topic)."""
    from mhgraph.generate.pool import Document

    texts = {"c1": "Veltrix Robotics recalled 62,000 Atlas Home robots after a fault found by Ofcom inspectors.",
             "c2": "Veltrix Robotics said the Lisbon recall of its robots would cost 40 million euros.",
             "c3": "Corvane Cells shipped a defective batch of batteries to Stellantis."}
    chunk_documents = {c: "d" + c[1:] for c in texts}
    titles = {"d1": "Veltrix Robotics recalls its home robots across Europe after months of complaints from owners"
                    " | Gadget Weekly",
              "d2": "Recall bill: what the robot maker will pay",
              "d3": "Battery troubles at Corvane"}
    documents = {d: Document(d, titles[d], None, None, None, None, source)
                 for d, source in (("d1", "The Verge"), ("d2", "Reuters"), ("d3", "Reuters"))}
    targets = {"c1": ("veltrix", "Veltrix Robotics"), "c2": ("veltrix", "Veltrix Robotics"),
               "c3": ("corvane", "Corvane Cells")}
    claims = {"k" + c[1:]: ClaimRecord("k" + c[1:], text, c, chunk_documents[c], *targets[c], "recall", "recall")
              for c, text in texts.items()}
    vectors = np.eye(3, dtype=np.float32)
    return ClaimPool("c", documents, list(texts), texts, chunk_documents, vectors, claims,
                     by_target={"veltrix": ["k1", "k2"], "corvane": ["k3"]})


def test_described_questions_name_articles_by_headline_and_their_facts_by_rare_names() -> None:
    """The describe wording: each article by its source and headline (cut before its outlet's suffix and after a
    noun phrase), each fact by its rarest names and figures, never the bridge the claims share (masked in
    headlines, left out of clues), and never a stretch of the fact itself."""
    from mhgraph.generate.candidate import COMPARISON, INFERENCE, MULTIHOP_RAG, TEMPORAL
    from mhgraph.generate.writers import DescribedTemplates

    pool, writer = _described_pool(), DescribedTemplates()
    inference = Candidate(MULTIHOP_RAG, INFERENCE, ("k1", "k2"), "target:veltrix", "Veltrix Robotics",
                          extra={"kind": "organisation"})
    query = writer.write(inference, pool).query
    assert query.startswith("Which organisation is the subject of both the Verge article \u2018this organisation "
                            "recalls its home robots")
    assert "Gadget Weekly" not in query                      # the outlet's suffix of the headline is cut
    assert "Veltrix" not in query
    assert "62,000" in query and "Ofcom" in query and "40 million" in query and "Lisbon" in query
    assert "Atlas Home robots after a fault" not in query    # no stretch of the fact is copied
    assert "the Reuters article \u2018Recall bill: what the robot maker will pay\u2019" in query

    same = Candidate(MULTIHOP_RAG, COMPARISON, ("k1", "k2"), "target:veltrix", "Yes", extra={"kind": "organisation"})
    query = writer.write(same, pool).query
    assert query.startswith("Do the Verge article \u2018an organisation recalls") and \
        query.endswith("concern the same organisation?") and "Veltrix" not in query
    before = Candidate(MULTIHOP_RAG, TEMPORAL, ("k2", "k1"), "target:veltrix", "No", extra={"form": "before"})
    query = writer.write(before, pool).query
    assert query.startswith("Was the Reuters article \u2018Recall bill") and "published before the Verge article" in query
    assert "Veltrix" in query                                # unmasked headline: a temporal question asks no name


def test_described_headlines_and_clues_never_give_away_a_hidden_name() -> None:
    """A headline that still holds a word of a hidden name once the name is masked (a short form, half of a
    hyphenated word, a surname) is left out, and so is one that only repeats the source; no clue shares a word
    with a hidden name; a headline's cut does not depend on how the title ends."""
    from mhgraph.generate.writers import DescribedTemplates

    pool, writer = _described_pool(), DescribedTemplates()
    hidden = ("Veltrix Robotics",)
    assert writer.headline("Veltrix to pay &#8216;40m&#8217; for Lisbon recall", "Reuters", hidden,
                           "this organisation") is None
    assert writer.headline("Altman-led OpenAI rehires Sam Altman", None, ("Sam Altman",), "this person") is None
    assert writer.headline("Robotics maker Veltrix Robotics expands", None, hidden, "this organisation") is None
    assert writer.headline("Veltrix Robotics opens a plant in Porto", None, hidden, "this organisation") == \
        "this organisation opens a plant in Porto"
    assert writer.headline("| Reuters", "Reuters") is None and writer.headline("Reuters", "Reuters") is None
    assert writer.clues(pool, "Judge Lewis A. Kaplan sentenced the founder in Manhattan.", ("Lewis Kaplan",)) == \
        ["Manhattan"]
    title = "Officials in the city said they would help the farmers today and tomorrow morning"
    assert writer.headline(title, None) == writer.headline(title + ".", None) == \
        "Officials in the city said they would help the farmers"


def test_a_difficulty_range_keeps_only_questions_with_a_difficulty_in_it(sample_claims, offline, tmp_path) -> None:
    from mhgraph.generate.report import summary_lines

    out = tmp_path / "ranged.json"
    questions, summary = _generate(offline, out, n=12, difficulty="1-2.5")   # every type asked, null too
    assert questions and all(q["difficulty"] and 1 <= q["difficulty"]["value"] <= 2.5 for q in questions)
    # null questions (no evidence, no D) are not asked for, and the summary says so
    assert "null: skipped, a null question has no difficulty D to lie in --difficulty" in summary["notes"]
    assert "null_query" not in summary["by_type"]
    from mhgraph.errors import MhgraphError

    with pytest.raises(MhgraphError, match=r"^--difficulty: null questions have no evidence"):
        _generate(offline, tmp_path / "nulls.json", n=4, types="null", difficulty="1-2.5")
    none, summary = _generate(offline, tmp_path / "none.json", n=4, difficulty="-20--10")
    assert none == [] and summary["difficulty"]["mean"] is None
    assert "  difficulty D       mean -; -" in summary_lines(summary, out, out)


def test_similarity_weight_sets_each_questions_difficulty(sample_claims, settings, tmp_path: Path) -> None:
    """--similarity-weight: D = h - lambda * s, recorded with its lambda; the summary bins D by equal counts."""
    out = tmp_path / "weighted.json"
    # a negative bound parses (with a large weight D is below 0)
    result = _generate_cli(settings, tmp_path, "--corpus", "sample", "--out", str(out), "--n", "8",
                           "--types", "inference,comparison", "--similarity-weight", "5", "--difficulty=-3-1.2")
    assert result.returncode == 0, result.stderr
    questions = json.loads(out.read_text(encoding="utf-8"))
    assert questions and all(q["difficulty"] for q in questions)
    for q in questions:
        d = q["difficulty"]
        assert d["similarity_weight"] == 5 and d["value"] == pytest.approx(d["hops"] - 5 * d["similarity"], abs=4e-4)
        assert -3 <= d["value"] <= 1.2
    summary = _summary_of(out)
    assert summary["difficulty"]["similarity_weight"] == 5 and summary["request"]["similarity_weight"] == 5
    assert summary["request"]["difficulty"] == [-3.0, 1.2]
    bins = summary["difficulty"]["bins"]
    assert sum(bins.values()) == len(questions)
    # equal-count bins (the half-unit ones are for lambda 1), easiest first
    lows = [float(label.strip("[<>=").split(",")[0]) for label in bins]
    assert lows == sorted(lows) and lows[0] == pytest.approx(min(q["difficulty"]["value"] for q in questions), abs=0.006)
    assert "difficulty D       (lambda 5) mean" in result.stdout
    negative = _generate_cli(settings, tmp_path, "--corpus", "sample", "--out", str(out), "--similarity-weight", "-1")
    assert negative.returncode == 2 and "--similarity-weight" in negative.stderr

"""Loading MultiHop-RAG questions: the bundled sample, filters, and one-line errors for bad input."""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import pytest

import mhgraph
from mhgraph.errors import InputError, MhgraphError
from mhgraph.benchmark import MISSING_HINT, load_questions, question_id
from mhgraph.types import Question

SAMPLE_QUESTIONS = Path(mhgraph.__file__).parent / "data" / "sample" / "questions.json"

EVIDENCE = {"title": "T", "author": "A", "url": "https://x.example/t", "source": "S", "category": "c",
            "published_at": "2023-10-03T09:00:00+00:00", "fact": "A fact."}
GOOD = {"query": "Q?", "answer": "yes", "question_type": "inference_query", "evidence_list": [EVIDENCE]}


def test_sample_loads_with_types_counted() -> None:
    questions = load_questions(SAMPLE_QUESTIONS)
    assert len(questions) == 24
    assert Counter(q.question_type for q in questions) == {
        "inference_query": 8, "comparison_query": 7, "temporal_query": 5, "null_query": 4}
    assert len({q.id for q in questions}) == 24
    assert all(isinstance(q, Question) for q in questions)
    assert all(q.is_null == (q.question_type == "null_query") for q in questions)
    assert all(q.evidence == () for q in questions if q.question_type == "null_query")
    first = questions[0]
    assert first.id == question_id(1, first.query) and first.id.startswith("q0001-")
    assert first.hops == len(first.evidence) == 3
    assert first.answer == "Veltrix Robotics"
    e = first.evidence[0]
    assert e.source == "Northwind Tech Review"
    assert e.published_at == datetime(2023, 10, 3, 9, 0, tzinfo=timezone.utc)
    assert e.fact.startswith("Veltrix Robotics on Monday launched Atlas Home")


def test_filters_keep_ids() -> None:
    every = {q.query: q.id for q in load_questions(SAMPLE_QUESTIONS)}
    temporal = load_questions(SAMPLE_QUESTIONS, types=["temporal_query"])
    assert len(temporal) == 5 and {q.question_type for q in temporal} == {"temporal_query"}
    assert all(every[q.query] == q.id for q in temporal)
    two = load_questions(SAMPLE_QUESTIONS, types={"comparison_query", "null_query"}, limit=2)
    assert [q.question_type for q in two] == [q.question_type for q in load_questions(
        SAMPLE_QUESTIONS, types={"comparison_query", "null_query"})][:2]
    assert load_questions(SAMPLE_QUESTIONS, limit=0) == []
    assert len(load_questions(SAMPLE_QUESTIONS, types="null_query")) == 4    # one type as a plain string


def test_ids_are_stable_and_content_checked() -> None:
    assert question_id(7, "Q?") == question_id(7, "Q?")
    assert question_id(7, "Q?") != question_id(7, "Q!")
    assert question_id(12345, "Q?").startswith("q12345-")


def _write(tmp_path: Path, name: str, content: str) -> Path:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    return path


def _records(*records: object) -> str:
    return json.dumps(list(records), indent=2)


def _without(record: dict, key: str) -> dict:
    return {k: v for k, v in record.items() if k != key}


BAD = {
    # name: (content, expected fragment after "<path>")
    "invalid JSON": (_records(GOOD)[:-1] + ',\n  {"query": }\n]', ":19: invalid JSON: Expecting value (column 13)"),
    "not a list": ('{"query": "Q?"}', ":1: expected a JSON list of questions"),
    "record not an object": (_records(GOOD, "text"), ":18 (record 2): expected a question object, got str"),
    "no query": (_records(GOOD, _without(GOOD, "query")), ":18 (record 2): missing field 'query'"),
    "empty query": (_records({**GOOD, "query": "  "}), ":2 (record 1): field 'query' is empty"),
    "no question_type": (_records(_without(GOOD, "question_type")), ":2 (record 1): missing field 'question_type'"),
    "query not a string": (_records({**GOOD, "query": 3}), ":2 (record 1): field 'query' must be a string, got int"),
    "no evidence_list": (_records(_without(GOOD, "evidence_list")), ":2 (record 1): missing field 'evidence_list'"),
    "evidence_list not a list": (_records({**GOOD, "evidence_list": "x"}),
                                 ":2 (record 1): field 'evidence_list' must be a list, got str"),
    "evidence without fact": (_records(GOOD, {**GOOD, "evidence_list": [EVIDENCE, _without(EVIDENCE, "fact")]}),
                              ":18 (record 2, evidence 2): missing field 'fact'"),
    "evidence not an object": (_records({**GOOD, "evidence_list": [1]}),
                               ":2 (record 1, evidence 1): expected an evidence object, got int"),
    "bad date": (_records({**GOOD, "evidence_list": [{**EVIDENCE, "published_at": "yesterday"}]}),
                 ":2 (record 1, evidence 1): field 'published_at': bad date 'yesterday'"),
    "claims not a list": (_records(GOOD, {**GOOD, "claims": "c1"}),
                          ":18 (record 2): field 'claims' must be a list of claim ids, got str"),
    "claim id not a string": (_records({**GOOD, "claims": ["c1", 7]}),
                              ":2 (record 1, claim 2): a claim id must be a string, got int"),
    "claim id empty": (_records({**GOOD, "claims": [" "]}), ":2 (record 1, claim 1): claim id is empty"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_is_one_line_naming_file_and_record(tmp_path: Path, case: str) -> None:
    content, fragment = BAD[case]
    path = _write(tmp_path, "MultiHopRAG.json", content)
    with pytest.raises(InputError) as info:
        load_questions(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}{fragment}"), message


def test_missing_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "MultiHopRAG.json"
    monkeypatch.setenv("MHGRAPH_BENCHMARK_DIR", str(tmp_path))   # the default place: say where it goes
    with pytest.raises(MhgraphError) as info:
        load_questions(path)
    assert str(info.value) == f"{path}: {MISSING_HINT}"
    assert "../shared/data/multihop-rag/" in str(info.value) and "--questions" in str(info.value)
    mine = tmp_path / "mine.json"   # a file of one's own: only that it is missing
    with pytest.raises(MhgraphError) as info:
        load_questions(mine)
    assert str(info.value) == f"{mine}: file not found"


def test_unknown_type_filter() -> None:
    with pytest.raises(MhgraphError, match="unknown question type"):
        load_questions(SAMPLE_QUESTIONS, types=["bridge_query"])


def test_types_by_their_short_names_as_generate_writes_them() -> None:
    full = load_questions(SAMPLE_QUESTIONS, types=["inference_query", "null_query"])
    assert full and {q.question_type for q in full} <= {"inference_query", "null_query"}
    assert load_questions(SAMPLE_QUESTIONS, types=["inference", "null"]) == full


def test_valid_minimal_file(tmp_path: Path) -> None:
    null = {"query": "N?", "answer": "Insufficient information.", "question_type": "null_query", "evidence_list": []}
    path = _write(tmp_path, "q.json", _records(GOOD, null))
    good, empty = load_questions(path)
    assert good.evidence[0].title == "T" and good.evidence[0].url == "https://x.example/t"
    assert empty.is_null and empty.hops == 0 and empty.id.startswith("q0002-")


def test_generated_questions_carry_claims_and_other_fields_are_ignored(tmp_path: Path) -> None:
    """A record `mhgraph generate` writes: the benchmark's fields, `claims` (read) and fields of its
    own (ignored); a benchmark record has no claims."""
    generated = {**GOOD, "claims": ["3f2a", " 9bc1 "], "hops": 2, "difficulty": {"mhts": 0.4},
                 "construction": "bridge", "made_by": {"generator": "offline"}, "claims_note": None}
    path = _write(tmp_path, "generated.json", _records(generated, GOOD, {**GOOD, "claims": None},
                                                       {**GOOD, "claims": []}))
    built, plain, null, empty = load_questions(path)
    assert built.claims == ("3f2a", "9bc1") and built.evidence[0].fact == "A fact." and built.hops == 1
    assert plain.claims == null.claims == empty.claims == ()
    assert all(q.claims == () for q in load_questions(SAMPLE_QUESTIONS))


def test_per_type_takes_the_first_questions_of_each_type_in_file_order() -> None:
    every = load_questions(SAMPLE_QUESTIONS)
    sliced = load_questions(SAMPLE_QUESTIONS, per_type=2)
    types = {q.question_type for q in every}
    assert [q.id for q in sliced] == [q.id for q in every
                                      if [p.id for p in every if p.question_type == q.question_type].index(q.id) < 2]
    assert len(sliced) == 2 * len(types)
    assert [q.question_type for q in load_questions(SAMPLE_QUESTIONS, per_type=1, types=["temporal_query"])] == [
        "temporal_query"]


@pytest.mark.parametrize("name", ["questions.jsonl", "questions.ndjson"])
def test_questions_as_json_lines_are_the_same_questions(tmp_path: Path, name: str) -> None:
    records = json.loads(SAMPLE_QUESTIONS.read_text(encoding="utf-8"))
    path = tmp_path / name
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    assert load_questions(path) == load_questions(SAMPLE_QUESTIONS)
    path.write_text(json.dumps(records[0]) + "\n" + json.dumps({"query": "no answer"}) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=rf"{name}:2 \(record 2\): "):
        load_questions(path)

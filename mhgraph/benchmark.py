"""Benchmark question files: where the benchmark is, and reading its questions.

Read the MultiHop-RAG questions (`MultiHopRAG.json`, or the bundled sample in the same format).

The file is a JSON list of records
`{query, answer, question_type, evidence_list: [{title, author, url, source, category,
published_at, fact}, ...]}`. Everything is validated while reading; a bad record raises
`InputError` whose one-line message names the file, the line where the record starts and the
record number (1-based), e.g. `MultiHopRAG.json:120 (record 7, evidence 2): missing field 'fact'`.

A generated question file (`mhgraph generate`) is in the same format with fields of its own on
each record. Of those, `claims` is read: a list of non-empty strings, the ids of the (:Claim)
nodes the question was built from (`Question.claims`; the evaluation's traces link the question to
them). Every other field is ignored.

Question ids: `q<position>-<hash>`, e.g. `q0007-3fa2c1`, where position is the record's 1-based
place in the file (zero-padded to at least 4 digits) and hash is the first 6 hex digits of the
SHA-256 of the query text. The position keeps the benchmark order, which other per-question files
follow (the reference Multi-Meta-RAG filters are listed in benchmark order); the hash makes an id
from a different or edited file fail to match instead of silently pointing at another question.
Ids are assigned before filtering, so a question keeps its id whatever `types`/`limit` select.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Collection

from mhgraph.errors import InputError, MhgraphError
from mhgraph.ingest.corpus import json_lines_records, json_records, named_json_lines, parse_datetime
from mhgraph.types import NULL_TYPE, QUESTION_TYPES, Evidence, Question

__all__ = ["BENCHMARK_DIR_ENV", "MISSING_HINT", "NULL_TYPE", "QUESTION_TYPES", "Evidence", "Question",
           "default_questions_path", "load_questions", "question_id", "question_key"]

BENCHMARK_DIR_ENV = "MHGRAPH_BENCHMARK_DIR"
MISSING_HINT = "file not found (put the benchmark in ../shared/data/multihop-rag/ or pass --questions)"


def default_questions_path() -> Path:
    """$MHGRAPH_BENCHMARK_DIR, else ../shared/data/multihop-rag beside the current directory or
    beside this checkout (an editable install), whichever exists."""
    if base := os.environ.get(BENCHMARK_DIR_ENV):
        return Path(base) / "MultiHopRAG.json"
    relative = Path("../shared/data/multihop-rag")
    checkout = Path(__file__).resolve().parents[1]
    for candidate in (relative, checkout.parent / "shared" / "data" / "multihop-rag"):
        if candidate.is_dir():
            return candidate / "MultiHopRAG.json"
    return relative / "MultiHopRAG.json"


def question_key(question: str) -> str:
    """A question's text, whitespace-normalised, hashed: enough to recognise it, not to read it.
    Models trained here record the keys of their training questions, so an evaluation can say when
    it scores questions a model saw."""
    return hashlib.sha256(" ".join(question.split()).encode()).hexdigest()[:16]


def question_id(position: int, query: str) -> str:
    """The id of the record at 1-based `position` with this query text (see module docstring)."""
    return f"q{position:04d}-{hashlib.sha256(query.encode('utf-8')).hexdigest()[:6]}"


def load_questions(
    path: Path | str,
    *,
    types: Collection[str] | None = None,
    limit: int | None = None,
    per_type: int | None = None,
    exclude: Collection[str] = (),
) -> list[Question]:
    """Read and validate every record, then leave out those whose text is in `exclude` (e.g. a
    method's few-shot demonstrations), keep those of `types` (all if None), the first `per_type`
    of each type (a stratified slice, in file order), the first `limit`."""
    path = Path(path)
    if isinstance(types, str):
        types = [types]
    if types is not None:   # a type's short name too ('inference'), as mhgraph generate writes them
        types = [f"{t}_query" if f"{t}_query" in QUESTION_TYPES else t for t in types]
        unknown = sorted(set(types) - set(QUESTION_TYPES))
        if unknown:
            raise MhgraphError(f"unknown question type(s) {', '.join(unknown)}; "
                               f"choose from {', '.join(QUESTION_TYPES)} (or without '_query')")
    if limit is not None and limit < 0:
        raise MhgraphError(f"limit must be >= 0, got {limit}")
    if per_type is not None and per_type < 1:
        raise MhgraphError(f"per_type must be >= 1, got {per_type}")
    if not path.is_file():
        # where the benchmark goes, unless the file was named (--questions, a path of one's own)
        raise InputError(path, "", MISSING_HINT if path == default_questions_path() else "file not found")
    # a JSON list of questions (the benchmark's form), or JSON Lines by the file's name
    records = json_lines_records if named_json_lines(path) else json_records
    questions = [_question(path, record, line, value) for record, line, value in records(path, "questions")]
    if exclude:
        questions = [q for q in questions if q.query not in exclude]
    if types is not None:
        questions = [q for q in questions if q.question_type in types]
    if per_type is not None:
        seen: dict[str, int] = {}
        kept = []
        for q in questions:
            seen[q.question_type] = seen.get(q.question_type, 0) + 1
            if seen[q.question_type] <= per_type:
                kept.append(q)
        questions = kept
    return questions if limit is None else questions[:limit]


# -- validation -------------------------------------------------------------------------------
def _string(path: Path, where: str, record: dict, name: str, *, required: bool) -> str | None:
    value = record.get(name)
    if value is None:
        if required:
            raise InputError(path, where, f"missing field '{name}'")
        return None
    if not isinstance(value, str):
        raise InputError(path, where, f"field '{name}' must be a string, got {type(value).__name__}")
    value = value.strip()
    if required and not value:
        raise InputError(path, where, f"field '{name}' is empty")
    return value or None


def _question(path: Path, record: int, line: int, value: object) -> Question:
    where = f"{line} (record {record})"
    if not isinstance(value, dict):
        raise InputError(path, where, f"expected a question object, got {type(value).__name__}")
    query = _string(path, where, value, "query", required=True)
    qtype = _string(path, where, value, "question_type", required=True)
    answer = _string(path, where, value, "answer", required=False) or ""
    if "evidence_list" not in value:
        raise InputError(path, where, "missing field 'evidence_list' (use [] for a question without evidence)")
    items = value["evidence_list"]
    if not isinstance(items, list):
        raise InputError(path, where, f"field 'evidence_list' must be a list, got {type(items).__name__}")
    evidence = tuple(_evidence(path, f"{line} (record {record}, evidence {k})", item)
                     for k, item in enumerate(items, start=1))
    assert query is not None and qtype is not None
    return Question(question_id(record, query), query, answer, qtype, evidence,
                    _claims(path, line, record, value.get("claims")))


def _claims(path: Path, line: int, record: int, items: object) -> tuple[str, ...]:
    """The optional `claims` field: the ids of the Claims a generated question was built from."""
    if items is None:
        return ()
    if not isinstance(items, list):
        raise InputError(path, f"{line} (record {record})",
                         f"field 'claims' must be a list of claim ids, got {type(items).__name__}")
    ids = []
    for k, item in enumerate(items, start=1):
        where = f"{line} (record {record}, claim {k})"
        if not isinstance(item, str):
            raise InputError(path, where, f"a claim id must be a string, got {type(item).__name__}")
        if not item.strip():
            raise InputError(path, where, "claim id is empty")
        ids.append(item.strip())
    return tuple(ids)


def _evidence(path: Path, where: str, item: object) -> Evidence:
    if not isinstance(item, dict):
        raise InputError(path, where, f"expected an evidence object, got {type(item).__name__}")
    fact = _string(path, where, item, "fact", required=True)
    published = _string(path, where, item, "published_at", required=False)
    when = None
    if published:
        try:
            when = parse_datetime(published)
        except ValueError:
            raise InputError(path, where, f"field 'published_at': bad date {published!r} (use ISO 8601)") from None
    assert fact is not None
    return Evidence(
        fact=fact,
        title=_string(path, where, item, "title", required=False),
        source=_string(path, where, item, "source", required=False),
        published_at=when,
        url=_string(path, where, item, "url", required=False),
    )

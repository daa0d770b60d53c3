"""`mhgraph generate`'s pipeline: candidates from the constructions, questions written, each checked,
kept or rejected with a reason, and the file written with its summary.

Per candidate, in order (the first check that fails rejects it, and the reason is counted):
1. written (templates or model; a model reply that stays unusable rejects the candidate);
2. hops within the request (MHTS with a model: the mapped pieces);
3. every fact verbatim in its chunk (normalised containment, the rule gold matching uses);
4. an entity answer not contained in its question;
5. not a near-duplicate (cosine of the question embeddings >= threshold) of a question kept before;
6. difficulty D = h - lambda * s (lambda: --similarity-weight, 1 by default), s the mean cosine
   between the question and its gold chunks (the chunks of the fact's article that contain it),
   within the requested range if one is given.
Null questions have no gold: they record instead their best retrieval score (the top cosine over
every chunk), which the summary sets beside the answerable questions'.

Resume: every decision is appended to `<out>.partial.jsonl` as it is made, under a fingerprint of
the request, the corpus's claim layer and the writer. A run that stops (a model that fails, an
interrupt) leaves it; the same command run again replays it and goes on; the finished file
replaces it.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mhgraph.benchmark import question_id
from mhgraph.errors import MhgraphError
from mhgraph.eval.difficulty import LAMBDA, bin_label, bin_labels, report_edges
from mhgraph.eval.gold import contains_fact, normalise
from mhgraph.generate.candidate import COMPARISON, INFERENCE, NULL, Candidate
from mhgraph.generate.facts import content_words
from mhgraph.generate.pool import ClaimPool
from mhgraph.generate.request import GenerateRequest, quotas
from mhgraph.generate.writers import OFFLINE_LABEL, QuestionWriter, Rejected
from mhgraph.llm.base import LLMError, LLMOutputError

FORMAT_VERSION = 2   # of the resume file: 2 since kinds are read per context and a question may not go on after "?"
YES_NO = {"Yes", "No"}
ANSWER_GIVEN = re.compile(r"\bthe answer is\b", re.IGNORECASE)
# text after the question mark: a model answering its own question, or a second sentence
GOES_ON = re.compile(r"\?\s*\S")
YES_NO_QUESTION = re.compile(r"^(?:is|are|was|were|do|does|did|has|have|had|can|could|will|would|should)\b", re.IGNORECASE)
# common words that say nothing of a fact (a question sharing only these with a fact does not use it)
COMMON = frozenset(["that", "this", "these", "those", "with", "from", "have", "were", "they", "their", "them", "about", "which", "would", "said", "says", "will", "been", "also", "more", "than", "into", "after", "before", "over", "what", "when", "where", "while", "there", "here", "such", "some", "other", "being", "does", "only", "just", "very", "most", "much", "many", "article", "report", "reports", "reported", "according"])


def drawn_on(query: str, fact: str, answer: str = "") -> bool:
    """Whether the question shares a word of four or more letters with the fact (its answer and
    common words aside): a question that shares none does not use that fact."""
    def words(text: str) -> set[str]:
        return {w for w in content_words(text) if len(w) >= 4 and w not in COMMON}
    return bool((words(query) & words(fact)) - words(answer))


@dataclass
class Outcome:
    key: str
    construction: str
    question_type: str
    record: dict[str, Any] | None = None      # the question, when kept
    reason: str | None = None                 # why not, when rejected

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "construction": self.construction, "type": self.question_type,
                "record": self.record, "reason": self.reason}


@dataclass
class Generation:
    records: list[dict[str, Any]]
    outcomes: list[Outcome]
    asked: dict[tuple[str, str], int]
    notes: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    resumed: int = 0


class Progress:
    """The partial file: a header line with the fingerprint, then one decision per line."""

    def __init__(self, path: Path, fingerprint: str) -> None:
        self.path, self.fingerprint = path, fingerprint
        self.done: dict[str, Outcome] = {}
        self.replaced = False          # a partial file of another request was there, and is replaced
        if path.is_file():
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            try:
                header = json.loads(lines[0]) if lines else {}
            except json.JSONDecodeError:
                header = {}
            self.replaced = header.get("fingerprint") != fingerprint
            if not self.replaced:
                for line in lines[1:]:
                    try:
                        row = json.loads(line)
                    except json.JSONDecodeError:      # a line cut short by a kill: redone
                        continue
                    self.done[row["key"]] = Outcome(row["key"], row["construction"], row["type"], row["record"],
                                                    row["reason"])
        try:
            if not self.done:
                path.write_text(json.dumps({"fingerprint": fingerprint}) + "\n", encoding="utf-8")
            self._file = path.open("a", encoding="utf-8")
        except OSError as exc:
            raise MhgraphError(f"{path}: cannot write ({exc.strerror or exc})") from None

    def add(self, outcome: Outcome) -> None:
        self._file.write(json.dumps(outcome.to_json()) + "\n")
        self._file.flush()

    def close(self, *, finished: bool) -> None:
        self._file.close()
        if finished:
            self.path.unlink(missing_ok=True)


def partial_path(out: Path) -> Path:
    return out.with_name(out.name + ".partial.jsonl")


def fingerprint(request: GenerateRequest, pool: ClaimPool, writer: QuestionWriter, claims_by: list[str]) -> str:
    # what changes a decision; the answerability check comes after them all
    # (the template wording means nothing to a model's questions; MHTS's lambda 1 is left out so that
    # a partial file written before the weight was an option still resumes)
    ignored = ({"answer_check"} | (set() if writer.label == OFFLINE_LABEL else {"wording"})
               | ({"similarity_weight"} if request.similarity_weight == LAMBDA else set()))
    data = {"format": FORMAT_VERSION, "request": request.model_dump(mode="json", exclude=ignored),
            "corpus": pool.corpus,
            "claims": len(pool.claims), "claims_by": sorted(claims_by), "writer": writer.label,
            "prompt": writer.prompt_version}
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:20]


class Generator:
    def __init__(self, pool: ClaimPool, writer: QuestionWriter, embed: Callable[[str], Any],
                 request: GenerateRequest, *, constructions: dict[str, Callable[[str], Iterator[Candidate]]],
                 claims_by: list[str], embedding_model: str) -> None:
        self.pool, self.writer, self.embed, self.request = pool, writer, embed, request
        self.constructions = constructions
        self.claims_by, self.embedding_model = claims_by, embedding_model
        self.kept_vectors: list[np.ndarray] = []
        self.document_chunks: dict[str, list[str]] = {}
        for c in pool.chunk_ids:
            self.document_chunks.setdefault(pool.chunk_document[c], []).append(c)

    def _vector(self, text: str) -> np.ndarray:
        v = np.asarray(self.embed(text), dtype=np.float32)
        n = np.linalg.norm(v)
        return v / n if n > 0 else v

    def run(self, out: Path, *, progress: Callable[[str], None] | None = None) -> Generation:
        request = self.request
        started = time.perf_counter()
        state = Progress(partial_path(out), fingerprint(request, self.pool, self.writer, self.claims_by))
        asked = quotas(request)
        outcomes: list[Outcome] = []
        records: list[dict[str, Any]] = []
        notes: list[str] = []
        if state.replaced:
            notes.append(f"{state.path} held the decisions of another request (or was unreadable): started afresh")
        resumed = 0
        try:
            for (construction, qtype), wanted in asked.items():
                if wanted <= 0:
                    continue
                kept = 0
                source = self.constructions.get(construction)
                if source is None:
                    continue
                for candidate in source(qtype):
                    if kept >= wanted:
                        break
                    outcome = state.done.get(candidate.key)
                    if outcome is not None:
                        resumed += 1
                        if outcome.record is not None:
                            self.kept_vectors.append(self._vector(outcome.record["query"]))
                    else:
                        outcome = self.consider(candidate)
                        state.add(outcome)
                    outcomes.append(outcome)
                    if outcome.record is not None:
                        records.append(outcome.record)
                        kept += 1
                        if progress and len(records) % 50 == 0:
                            progress(f"{len(records)} questions")
                if kept < wanted:
                    notes.append(f"{construction} {qtype}: wrote {kept} of {wanted}; the corpus allows no more "
                                 "with these settings")
        except LLMError as exc:
            raise MhgraphError(f"the model failed after {len(records)} questions ({exc}); what was made is kept in "
                               f"{state.path}: run the same command again to resume") from None
        finally:
            state.close(finished=False)   # the partial file goes once the questions file is written
        for number, record in enumerate(records, start=1):   # the id eval gives the question (benchmark.py)
            record["id"] = question_id(number, record["query"])
        if not self.pool.has_dates and "temporal" in request.types:
            notes.append("temporal: skipped, the corpus's documents have no publication dates")
        if not self.pool.has_sources:
            notes.append("no sources in this corpus: questions name reports by order, not by outlet")
        return Generation(records, outcomes, asked, notes, {"generate": time.perf_counter() - started}, resumed)

    def consider(self, candidate: Candidate) -> Outcome:
        outcome = Outcome(candidate.key, candidate.construction, candidate.question_type)
        try:
            outcome.record = self._record(candidate)
        except Rejected as why:
            outcome.reason = str(why)
        except LLMOutputError:
            outcome.reason = "the model's reply stayed unusable"
        return outcome

    def _record(self, candidate: Candidate) -> dict[str, Any]:
        request, pool = self.request, self.pool
        written = self.writer.write(candidate, pool)
        hops = len(written.facts)
        if candidate.evidence and not request.hops[0] <= hops <= request.hops[1]:
            raise Rejected("hops outside the requested range")
        for chunk, fact in written.facts:
            if not contains_fact(pool.chunk_text[chunk], fact):
                raise Rejected("a fact is not verbatim in its chunk")
        if not written.query.strip():
            raise Rejected("empty question")
        if not written.answer.strip():      # a model's MHTS answer can come back empty
            raise Rejected("empty answer")
        if (candidate.question_type == INFERENCE and written.answer
                and normalise(written.answer) in normalise(written.query)):
            raise Rejected("the question contains its answer")
        if ANSWER_GIVEN.search(written.query):
            raise Rejected("the question states its answer")
        # (a template's form is fixed, and a fact it quotes may hold a question mark)
        if self.writer.label != OFFLINE_LABEL and GOES_ON.search(written.query):
            raise Rejected("the question goes on after its question mark")
        if candidate.question_type == COMPARISON and any(
                normalise(name) in normalise(written.query) for name in self._targets(candidate)):
            raise Rejected("the comparison names the entity it asks about")
        if written.answer in YES_NO and not YES_NO_QUESTION.match(written.query):
            raise Rejected("a yes/no answer to a question that is not a yes/no question")
        if candidate.question_type == NULL and normalise(candidate.extra.get("fake", "")) not in normalise(written.query):
            raise Rejected("the null question does not name its invented entity")
        if any(not drawn_on(written.query, fact, written.answer) for _, fact in written.facts):
            raise Rejected("the question draws on no word of one of its facts")
        vector = self._vector(written.query)
        if self.kept_vectors and float(np.max(np.stack(self.kept_vectors) @ vector)) >= request.duplicate_threshold:
            raise Rejected("near-duplicate of a question kept before")
        difficulty = None
        best_score = None
        if written.facts:
            gold = self._gold_rows(written.facts)
            s = float(np.mean(pool.chunk_vectors[gold] @ vector))
            weight = request.similarity_weight
            difficulty = {"hops": hops, "similarity": round(s, 4), "value": round(hops - weight * s, 4)}
            if weight != LAMBDA:   # MHTS's lambda 1 goes unsaid, so a file made with it is what it always was
                difficulty["similarity_weight"] = weight
            if request.difficulty and not request.difficulty[0] <= difficulty["value"] <= request.difficulty[1]:
                raise Rejected("difficulty outside the requested range")
        elif request.difficulty:   # a null question has no evidence, so no D to lie in the range
            raise Rejected("no difficulty (no evidence) under a difficulty range")
        if len(pool.chunk_ids):
            best_score = round(float(np.max(pool.chunk_vectors @ vector)), 4)
        self.kept_vectors.append(vector)
        return self._as_record(candidate, written, hops, difficulty, best_score)

    def _targets(self, candidate: Candidate) -> set[str]:
        return {t for c in candidate.claims if (t := self.pool.claims[c].target) and len(t) >= 3}

    def _gold_rows(self, facts: list[tuple[str, str]]) -> list[int]:
        """Rows of pool.chunk_vectors: per fact, the chunks of its article that contain it."""
        rows: list[int] = []
        for chunk, fact in facts:
            holding = [c for c in self.document_chunks[self.pool.chunk_document[chunk]]
                       if c == chunk or contains_fact(self.pool.chunk_text[c], fact)]
            rows.extend(self.pool.chunk_row[c] for c in holding if self.pool.chunk_row[c] not in rows)
        return rows

    def _as_record(self, candidate: Candidate, written, hops: int, difficulty, best_score) -> dict[str, Any]:
        pool = self.pool
        evidence = [pool.documents[pool.chunk_document[chunk]].evidence(fact) for chunk, fact in written.facts]
        record: dict[str, Any] = {
            "query": written.query, "answer": written.answer, "question_type": candidate.question_type,
            "evidence_list": evidence,
            "_key": candidate.key, "_best": best_score,
            "hops": hops if candidate.evidence else 0, "claims": list(candidate.claims),
            "chunks": [chunk for chunk, _ in written.facts],
            "difficulty": difficulty, "construction": candidate.construction, "bridge": candidate.bridge,
            "made_by": {"strategy": OFFLINE_LABEL if self.writer.label == OFFLINE_LABEL else "model",
                        "model": None if self.writer.label == OFFLINE_LABEL else self.writer.label,
                        "prompt_version": self.writer.prompt_version, "seed": self.request.seed,
                        "claims_by": self.claims_by, "embedding_model": self.embedding_model},
        }
        if "tree" in candidate.extra:
            record["tree"] = candidate.extra["tree"]
        if written.composed:
            record["composed_claim"] = written.composed
            record["pieces"] = written.pieces
        if candidate.question_type == NULL:
            record["null_check"] = {"invented": candidate.extra.get("fake"), "best_score": best_score}
        return record


# -- the summary ---------------------------------------------------------------------------------
def lexical_overlap(query: str, facts: list[str]) -> float:
    """The share of the question's content words that its facts hold (what BM25 feeds on)."""
    words = content_words(query)
    held = content_words(" ".join(facts))
    return len(words & held) / len(words) if words else 0.0


def summarise(generation: Generation, pool: ClaimPool, writer: QuestionWriter, request: GenerateRequest,
              answerable: dict[str, Any] | None = None) -> dict[str, Any]:
    records = generation.records
    answerable_records = [r for r in records if r["evidence_list"]]
    reasons = Counter(o.reason for o in generation.outcomes if o.reason)
    facts = [(r, e["fact"]) for r in answerable_records for e in r["evidence_list"]]
    verbatim = sum(1 for r in answerable_records for c, e in zip(r["chunks"], r["evidence_list"])
                   if pool.chunk_document.get(c) and contains_fact(pool.chunk_text[c], e["fact"])
                   and pool.documents[pool.chunk_document[c]].title == (e["title"] or None))
    contains_answer = sum(1 for r in records if r["question_type"] == INFERENCE
                          and normalise(r["answer"]) in normalise(r["query"]))
    d_values = [r["difficulty"]["value"] for r in records if r.get("difficulty")]
    edges = report_edges(d_values, request.similarity_weight)
    in_bins = Counter(bin_label(d, edges) for d in d_values)
    null_scores = [r["null_check"]["best_score"] for r in records if r.get("null_check")]
    written_by_type = Counter(r["question_type"] for r in records)
    asked_by_type: Counter = Counter()
    for (_, t), n in generation.asked.items():
        asked_by_type[t] += n
    best_answerable = _best_scores(pool, answerable_records)
    median = float(np.median(best_answerable)) if best_answerable else None
    summary = {
        "corpus": pool.corpus, "made_by": records[0]["made_by"] if records else None,
        "strategy": "offline templates" if writer.label == OFFLINE_LABEL else f"model {writer.label}",
        "request": request.model_dump(mode="json"),
        "questions": len(records),
        "by_type": {t: {"asked": asked_by_type[t], "written": written_by_type.get(t, 0)} for t in asked_by_type},
        "by_construction": dict(Counter(r["construction"] for r in records)),
        "hops": dict(sorted(Counter(r["hops"] for r in records).items())),
        "difficulty": {"similarity_weight": request.similarity_weight,
                       "bins": {label: in_bins[label] for label in bin_labels(edges) if in_bins[label]},
                       "mean": round(float(np.mean(d_values)), 3) if d_values else None},
        "checks": {
            "facts": len(facts), "facts_verbatim": verbatim,
            "verbatim_share": round(verbatim / len(facts), 4) if facts else None,
            "questions_containing_answer": contains_answer,
            "rejected": dict(reasons.most_common()),
            "near_duplicates_removed": reasons.get("near-duplicate of a question kept before", 0),
            "null_best_score": {"null_mean": round(float(np.mean(null_scores)), 4) if null_scores else None,
                                "answerable_median": round(median, 4) if median is not None else None,
                                "nulls_above_answerable_median": sum(1 for s in null_scores
                                                                     if median is not None and s > median)},
            "lexical_overlap": round(float(np.mean([lexical_overlap(r["query"], [e["fact"] for e in
                                                    r["evidence_list"]]) for r in answerable_records])), 4)
            if answerable_records else None,
            "answerable": answerable,
        },
        "notes": generation.notes,
        "resumed_decisions": generation.resumed,
        "seconds": {k: round(v, 2) for k, v in generation.seconds.items()},
    }
    return summary


def _best_scores(pool: ClaimPool, records: list[dict[str, Any]]) -> list[float]:
    return [r["_best"] for r in records if r.get("_best") is not None]


def public(record: dict[str, Any]) -> dict[str, Any]:
    """The record as the questions file holds it (working fields left out)."""
    return {k: v for k, v in record.items() if not k.startswith("_")}

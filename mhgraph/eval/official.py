"""The official MultiHop-RAG scoring rule (`retrieval_evaluate.py`), beside ours.

The published Hits@K / MAP@10 / MRR@10 of MultiHop-RAG and of the methods compared on it were
computed with this rule, so every comparison with a published figure uses it. Ours
(`mhgraph.eval.gold` + `mhgraph.eval.metrics`) is more lenient: it normalises case, quotes and
dashes and counts a fact that straddles two chunks. The rule, exactly:

1. Retrieved item text: each chunk of the final ranked list with LlamaIndex's metadata header, as
   in the reference runs (`item_text`):
   `[Excerpt from document]\\ntitle: {title}\\npublished_at: {published_at}\\nsource: {source}\\n`
   `Excerpt:\\n-----\\n{chunk text}\\n-----`, published_at written as the corpus writes it
   (ISO 8601 with offset, e.g. `2023-09-26T21:11:15+00:00`). A missing field is left empty.
2. Normalisation (`normalise`) removes every ASCII space `" "` and every `"\\n"` from both sides,
   and nothing else: case, punctuation, tabs, NBSP and other whitespace are kept.
3. The item at rank r (r <= 10) is relevant when some normalised gold fact (`evidence_list[i].fact`)
   is a substring of it. The whole fact must lie in one chunk: a fact cut by a chunk boundary is
   never matched.
4. Per question: Hits@4 / Hits@10 = 1 when a relevant item is in the top 4 / 10; MRR@10 =
   1 / (rank of the first relevant item), 0 if none; MAP@10 (not the standard MAP) = the sum, over
   the relevant ranks r, of (number of gold facts first found in the item at r) / r, divided by
   min(len(evidence_list), 10). A fact found again at a later rank is not counted again, and
   facts equal after normalisation count as one (the reference keeps a list of found facts).
   Recall@10 is not in retrieval_evaluate.py (the comparative study published one, from its own
   code): here, the share of the question's distinct normalised gold facts found in the top 10,
   matched by this rule, so that published Recall@10 is compared under the official matching.
5. Questions with an empty evidence list (null queries) are skipped; every other question counts,
   with 0 when none of its facts is found, and the scores are means over them. Ours instead
   leaves out questions whose facts match no chunk at all (`metrics.null_scores`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from statistics import fmean

from mhgraph.eval.gold import FACT_PREVIEW, UnmatchedFact
from mhgraph.types import Question, RetrievalResult, RetrievedChunk

RULE = "official rule (MultiHop-RAG retrieval_evaluate.py)"
SCORINGS = ("ours", "official", "both")
DEPTH = 10                                       # ranks r <= 10 are looked at
METRICS = ("hits@4", "hits@10", "map@10", "mrr@10", "recall@10")
HEADER = ("[Excerpt from document]\ntitle: {title}\npublished_at: {published_at}\nsource: {source}\n"
          "Excerpt:\n-----\n{text}\n-----")


def excerpt(text: str, title: str | None = None, published_at: datetime | str | None = None,
            source: str | None = None) -> str:
    """The chunk text with the reference runs' LlamaIndex metadata header (rule 1)."""
    when = published_at.isoformat() if isinstance(published_at, datetime) else (published_at or "")
    return HEADER.format(title=title or "", published_at=when, source=source or "", text=text)


def item_text(chunk: RetrievedChunk) -> str:
    """The text the official rule matches facts in, for one retrieved chunk."""
    return excerpt(chunk.text, chunk.title, chunk.published_at, chunk.source)


def normalise(text: str) -> str:
    """Remove every ASCII space and every newline, nothing else (rule 2)."""
    return text.replace(" ", "").replace("\n", "")


@dataclass(frozen=True)
class OfficialScore:
    """One question's scores under the official rule."""

    relevant_ranks: tuple[int, ...]      # 1-based ranks <= 10 of the relevant items
    first_found: tuple[int, ...]         # per relevant rank, gold facts first found there
    facts: int                           # len(evidence_list)
    hits_at_4: float
    hits_at_10: float
    map_at_10: float
    mrr_at_10: float
    recall_at_10: float                  # share of the distinct gold facts found in the top 10
    # hop-conditioned (P_r, R_r, F1_r) per hop r over the accumulated set D_r, every item of it
    # (no depth cut): P_r the share of its items holding a gold fact, R_r the share of the distinct
    # gold facts found in it
    hops: tuple[tuple[float, float, float], ...] = ()

    @property
    def scores(self) -> dict[str, float]:
        return dict(zip(METRICS, (self.hits_at_4, self.hits_at_10, self.map_at_10, self.mrr_at_10,
                                  self.recall_at_10)))

    def to_json(self) -> dict[str, object]:
        return {"relevant_ranks": list(self.relevant_ranks), "first_found": list(self.first_found),
                "facts": self.facts, **self.scores, "hops": [list(h) for h in self.hops]}


def score_texts(retrieved: Sequence[str], facts: Sequence[str]) -> OfficialScore:
    """Score ranked item texts (headers included) against a non-empty list of gold facts (rules 2-4)."""
    if not facts:
        raise ValueError("the official rule skips questions without evidence facts")
    gold = [normalise(f) for f in facts]
    return score_found([{g for g in gold if g in normalise(text)} for text in retrieved[:DEPTH]], gold)


def score_found(present: Sequence[Collection[str]], gold: Sequence[str]) -> OfficialScore:
    """Score a ranking by the normalised gold facts its items hold, rank by rank (rules 3-4): what
    score_texts does once each item's facts are known, so a ranking re-ordered many times (a
    benchmark weighing rerankers again) is scored without matching texts again."""
    if not gold:
        raise ValueError("the official rule skips questions without evidence facts")
    found: set[str] = set()
    ranks: list[int] = []
    first: list[int] = []
    for rank, facts in enumerate(present[:DEPTH], start=1):
        if facts:
            ranks.append(rank)
            first.append(len(set(facts) - found))
            found |= set(facts)
    ap = sum(n / r for r, n in zip(ranks, first)) / min(len(gold), DEPTH)
    return OfficialScore(tuple(ranks), tuple(first), len(gold),
                         hits_at_4=float(any(r <= 4 for r in ranks)), hits_at_10=float(bool(ranks)),
                         map_at_10=ap, mrr_at_10=1.0 / ranks[0] if ranks else 0.0,
                         recall_at_10=len(found) / len(set(gold)))


def hop_scores(new_per_hop: Sequence[Sequence[str]], facts: Sequence[str]) -> tuple[tuple[float, float, float], ...]:
    """(P_r, R_r, F1_r) per hop, from the item texts each hop added to the accumulated set, under
    the official matching (rules 2-3)."""
    gold = {normalise(f) for f in facts}
    found: set[str] = set()
    relevant = size = 0
    out = []
    for texts in new_per_hop:
        for text in texts:
            present = {g for g in gold if g in normalise(text)}
            size += 1
            relevant += bool(present)
            found |= present
        p = relevant / size if size else 0.0
        r = len(found) / len(gold) if gold else 0.0
        out.append((p, r, 2 * p * r / (p + r) if p + r else 0.0))
    return tuple(out)


def score_result(question: Question, result: RetrievalResult) -> OfficialScore | None:
    """The question's official scores on its final ranked list, and hop by hop; None for a null
    question (skipped)."""
    if not question.evidence:
        return None
    facts = [e.fact for e in question.evidence]
    seen: set[str] = set()
    new_per_hop = []
    for hop in result.hops:
        added = [c for c in hop.chunks if c.chunk_id not in seen]
        seen |= {c.chunk_id for c in added}
        new_per_hop.append([item_text(c) for c in added])
    score = score_texts([item_text(c) for c in result.final_ranking()], facts)
    return replace(score, hops=hop_scores(new_per_hop, facts))


def score_all(questions: Iterable[Question], results: Mapping[str, RetrievalResult]) -> dict[str, OfficialScore | None]:
    """`score_result` per question id."""
    return {q.id: score_result(q, results[q.id]) for q in questions}


def _group(scores: Sequence[OfficialScore]) -> dict[str, object]:
    means = {m: fmean(s.scores[m] for s in scores) if scores else 0.0 for m in METRICS}
    r_max = max((len(s.hops) for s in scores), default=0)
    hops = []
    for r in range(1, r_max + 1):   # a question that stopped earlier keeps its last set
        at = [s.hops[min(r, len(s.hops)) - 1] if s.hops else (0.0, 0.0, 0.0) for s in scores]
        hops.append({"hop": r, **{k: fmean(h[i] for h in at) for i, k in enumerate(("precision", "recall", "f1"))}})
    return {"n": len(scores), **means, "hops": hops}


def summarise(questions: Sequence[Question], scores: Mapping[str, OfficialScore | None]) -> dict[str, object]:
    """The run's official block: means overall and per question type over the non-null questions (rule 5).

    `{"rule", "questions", "skipped_null", "overall": {"n", "hits@4", ...}, "by_type": {type: ...}}`
    """
    kept: list[OfficialScore] = []
    by_type: dict[str, list[OfficialScore]] = {}
    for q in questions:
        if (s := scores.get(q.id)) is not None:
            kept.append(s)
            by_type.setdefault(q.question_type, []).append(s)
    return {
        "rule": RULE, "questions": len(kept), "skipped_null": len(questions) - len(kept),
        "overall": _group(kept), "by_type": {t: _group(v) for t, v in sorted(by_type.items())},
    }


@dataclass
class FactCoverage:
    """How many evidence facts the official rule can match at all at this chunking."""

    facts: int
    matched: int
    unmatched: list[UnmatchedFact]

    def lines(self) -> list[str]:
        return [f"{RULE}: {self.matched} of {self.facts} facts lie whole in one chunk (spaces and newlines removed, "
                f"nothing else); it can never match these {len(self.unmatched)}:",
                *(f"  {u.question_id} [{u.title or '?'}] {u.fact!r}" for u in self.unmatched)]


def fact_coverage(questions: Iterable[Question], chunk_texts: Iterable[str]) -> FactCoverage:
    """Facts that some chunk's text contains under the official normalisation (rules 2-3). The
    metadata header is left out: a fact is body text, and matching it in a title says nothing."""
    haystack = "\x00".join(normalise(t) for t in chunk_texts)   # no fact contains \x00: no match across chunks
    facts, unmatched = 0, []
    for q in questions:
        for e in q.evidence:
            facts += 1
            needle = normalise(e.fact)
            if not needle or needle not in haystack:
                unmatched.append(UnmatchedFact(q.id, e.title, e.fact[:FACT_PREVIEW]))
    return FactCoverage(facts, facts - len(unmatched), unmatched)

"""Retrieval metrics: hop-conditioned precision/recall/F1 (ours) and ranking metrics (ranx).

Hop-conditioned P/R/F1 (the comparative study's metric, `hop_scores`). For a question with gold
chunk set R and D_r the distinct chunks retrieved in hops 1..r (`RetrievalResult.accumulated_ids`):
P_r = |D_r & R| / |D_r| (0 when D_r is empty), R_r = |D_r & R| / |R|, F1_r = 2 P_r R_r / (P_r + R_r)
(0 when P_r + R_r = 0). Scores are given for r = 1..r_max, r_max being the most hops any method in
the run made (or a value the caller fixes); a method that stopped earlier keeps its last
accumulated set, so its hop r beyond its last hop scores as its last hop. A chunk retrieved again
at a later hop is counted once. Averages are macro averages over the questions whose gold set is
non-empty.

Ranking metrics (`ranking_scores`), computed by ranx on `RetrievalResult.final_ranking()`:
Hits@4, Hits@10 (ranx `hit_rate@k`: 1 when a gold chunk is in the top k), MAP@10 (ranx `map@10`:
the sum of precision@i over gold ranks i <= 10, divided by |R|), MRR@10, Recall@k for the chosen k
and `recall@all` (ranx `recall`: the whole returned list, to be read with the average number of
chunks returned, K, as in TreeHop's Recall@K). ranx is fed rank-derived scores (n - rank + 1)
so that its ordering is exactly ours, ties included.

ranx and empty input (checked with ranx 0.3.21): a query with an empty relevance judgement is
kept and scores 0 for every metric, which would pull averages down, so questions without gold
are never passed to ranx. A query with an empty run is kept and scores 0, which is what we want
(it still counts in the average); but a `Run` in which every query is empty cannot be built
(ranx raises ValueError), so when no question returned anything every score is set to 0 without
calling ranx.

Questions without gold (null questions, whose evidence list is empty, and questions whose facts
matched no chunk) are excluded from every average and summarised apart (`null_scores`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from statistics import fmean
from typing import Callable, Collection, Iterable, Mapping, Sequence

from mhgraph.types import Question, RetrievalResult

RANKING_METRICS: dict[str, str] = {      # our name -> ranx metric
    "hits@4": "hit_rate@4",
    "hits@10": "hit_rate@10",
    "map@10": "map@10",
    "mrr@10": "mrr@10",
}
RECALL_AT: tuple[int, ...] = (10,)       # Recall@k reported besides recall@all


# -- hop-conditioned P/R/F1 -------------------------------------------------------------------
@dataclass(frozen=True)
class HopScore:
    hop: int
    retrieved: int        # |D_r|
    precision: float
    recall: float
    f1: float


def prf(retrieved: Collection[str], gold: Collection[str]) -> tuple[float, float, float]:
    """(precision, recall, F1) of a retrieved set against a gold set (0 where undefined)."""
    got, want = set(retrieved), set(gold)
    hit = len(got & want)
    p = hit / len(got) if got else 0.0
    r = hit / len(want) if want else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def hop_scores(result: RetrievalResult, gold: Collection[str], r_max: int | None = None) -> list[HopScore]:
    """P_r, R_r, F1_r for r = 1..r_max (default: the result's hops); beyond its last hop, D_r = D_last."""
    r_max = len(result.hops) if r_max is None else r_max
    scores = []
    for r in range(1, r_max + 1):
        accumulated = result.accumulated_ids(min(r, len(result.hops)))
        scores.append(HopScore(r, len(accumulated), *prf(accumulated, gold)))
    return scores


# -- ranking metrics (ranx) -------------------------------------------------------------------
def ranking_metric_names(recall_at: Sequence[int] = RECALL_AT) -> list[str]:
    return [*RANKING_METRICS, *(f"recall@{k}" for k in recall_at), "recall@all"]


def ranking_scores(
    rankings: Mapping[str, Sequence[str]],
    gold: Mapping[str, Collection[str]],
    recall_at: Sequence[int] = RECALL_AT,
) -> dict[str, dict[str, float]]:
    """Per question id, the ranking metrics of its ranked chunk ids (see module docstring).

    Only questions with a non-empty gold set get scores; an empty ranking scores 0.
    """
    from ranx import Qrels, Run, evaluate

    ids = [q for q in rankings if gold.get(q)]
    names = ranking_metric_names(recall_at)
    if not any(rankings[q] for q in ids):
        return {q: dict.fromkeys(names, 0.0) for q in ids}
    to_ranx = {**RANKING_METRICS, **{f"recall@{k}": f"recall@{k}" for k in recall_at}, "recall@all": "recall"}
    qrels = Qrels({q: dict.fromkeys(gold[q], 1) for q in ids})
    run = Run({q: {c: float(len(rankings[q]) - i) for i, c in enumerate(_distinct(rankings[q]))} for q in ids})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # numba's NumbaTypeSafetyWarning on hit_rate's int cast
        evaluate(qrels, run, list(to_ranx.values()), return_mean=False)
    per_metric = {name: run.scores[metric] for name, metric in to_ranx.items()}
    return {q: {name: float(per_metric[name][q]) for name in names} for q in ids}


def _distinct(ids: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(ids))


# -- per question -----------------------------------------------------------------------------
@dataclass
class QuestionResult:
    """Everything measured on one question by one method."""

    question_id: str
    question_type: str
    evidence: int                    # h: evidence facts in the benchmark
    gold: tuple[str, ...]            # gold chunk ids R(q)
    hops: list[HopScore]             # r = 1..r_max
    ranking: dict[str, float]        # empty when gold is empty
    returned: int                    # distinct chunks returned (K)
    method_hops: int                 # hops the method actually made
    latency_s: float
    difficulty: float | None = None  # MHTS D, when computed

    @property
    def scored(self) -> bool:
        """Counts in the averages: it has at least one gold chunk."""
        return bool(self.gold)


def score_results(
    questions: Sequence[Question],
    results: Mapping[str, RetrievalResult],
    gold: Mapping[str, Collection[str]],
    *,
    r_max: int | None = None,
    recall_at: Sequence[int] = RECALL_AT,
    difficulty: Mapping[str, float] | None = None,
) -> list[QuestionResult]:
    """Score each question's `RetrievalResult` (by question id) against its gold chunk ids.

    A question with no result raises KeyError.
    r_max defaults to the most hops any result made.
    """
    r_max = r_max if r_max is not None else max((len(results[q.id].hops) for q in questions), default=1)
    rankings = {q.id: [c.chunk_id for c in results[q.id].final_ranking()] for q in questions}
    ranked = ranking_scores(rankings, {q.id: gold.get(q.id, ()) for q in questions}, recall_at)
    out = []
    for q in questions:
        result, want = results[q.id], tuple(gold.get(q.id, ()))
        out.append(QuestionResult(
            question_id=q.id, question_type=q.question_type, evidence=len(q.evidence), gold=want,
            hops=hop_scores(result, want, r_max), ranking=ranked.get(q.id, {}),
            returned=len(rankings[q.id]), method_hops=len(result.hops), latency_s=result.seconds,
            difficulty=(difficulty or {}).get(q.id),
        ))
    return out


# -- averages ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class HopMean:
    hop: int
    retrieved: float      # mean |D_r|
    precision: float
    recall: float
    f1: float


@dataclass
class GroupScores:
    """Macro averages over the scored questions of one group (all, a type, a difficulty bin)."""

    n: int
    hops: list[HopMean] = field(default_factory=list)
    ranking: dict[str, float] = field(default_factory=dict)
    avg_returned: float = 0.0


def aggregate(records: Iterable[QuestionResult]) -> GroupScores:
    """Macro averages over the records with gold; the others are ignored."""
    scored = [r for r in records if r.scored]
    if not scored:
        return GroupScores(0)
    r_max = max(len(r.hops) for r in scored)
    hops = []
    for i in range(r_max):
        at = [r.hops[min(i, len(r.hops) - 1)] for r in scored]
        hops.append(HopMean(i + 1, fmean(h.retrieved for h in at), fmean(h.precision for h in at),
                            fmean(h.recall for h in at), fmean(h.f1 for h in at)))
    names = list(dict.fromkeys(n for r in scored for n in r.ranking))
    ranking = {n: fmean(r.ranking.get(n, 0.0) for r in scored) for n in names}
    return GroupScores(len(scored), hops, ranking, fmean(r.returned for r in scored))


def grouped(records: Iterable[QuestionResult], key: Callable[[QuestionResult], str | None]) -> dict[str, GroupScores]:
    """`aggregate` per key value over the scored records (records whose key is None are skipped)."""
    groups: dict[str, list[QuestionResult]] = {}
    for r in records:
        k = key(r)
        if r.scored and k is not None:
            groups.setdefault(k, []).append(r)
    return {k: aggregate(v) for k, v in sorted(groups.items())}


@dataclass(frozen=True)
class NullScores:
    """The questions left out of the averages because they have no gold chunk."""

    count: int                     # all of them
    null_questions: int            # no evidence in the benchmark (null_query): should abstain
    unmatched: int                 # evidence whose facts matched no chunk (a coverage problem)
    avg_returned: float            # mean chunks returned over the null questions
    abstained: int                 # null questions with nothing returned
    unmatched_ids: tuple[str, ...] = ()


def null_scores(records: Iterable[QuestionResult]) -> NullScores:
    left = [r for r in records if not r.scored]
    null = [r for r in left if r.evidence == 0]
    unmatched = tuple(r.question_id for r in left if r.evidence > 0)
    return NullScores(
        count=len(left), null_questions=len(null), unmatched=len(unmatched),
        avg_returned=fmean(r.returned for r in null) if null else 0.0,
        abstained=sum(1 for r in null if r.returned == 0), unmatched_ids=unmatched,
    )

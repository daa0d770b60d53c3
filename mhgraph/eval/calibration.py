"""Difficulty calibration: does a question set's MHTS difficulty D = h - lambda * s order a method's misses?

MHTS checks its D against how often naive RAG fails: over equal-size bins of D, Pearson r between a
bin's mean D and the failure rate (0.99 published, with lambda = 1). Here the failure is a run's miss
rate, 1 - Recall@K, per question; `calibrate` makes the equal-count bins (each of at least `min_bin`
questions, at most `max_bins`) and the r.

lambda trades a unit of cosine similarity for hops, so it depends on the embedding model: the
spread of s across questions is a few tenths with a small sentence encoder, against whole units of
h, and with lambda = 1 the similarity hardly moves D even where it decides the misses.
`fit_similarity_weight` reads lambda off one run: the least-squares line of the per-question miss
on h and s, lambda = -(slope on s) / (slope on h), the weight at which both terms of D move the
expected miss alike. Fit it on questions a user has (a generated set, scored by the method whose
misses D should order) and check it on another set; the fitted lambda is then given to
`mhgraph eval --similarity-weight` and `mhgraph generate --similarity-weight`.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import numpy as np

from mhgraph.errors import MhgraphError
from mhgraph.eval.difficulty import quantile_edges


@dataclass(frozen=True)
class DifficultyPoint:
    """One scored question: its hops h, its similarity s, its Recall@K in [0, 1]."""
    hops: int
    similarity: float
    recall: float

    def value(self, similarity_weight: float) -> float:
        return self.hops - similarity_weight * self.similarity


@dataclass(frozen=True)
class CalibrationBin:
    low: float
    high: float
    questions: int
    mean_difficulty: float
    miss_rate: float


@dataclass(frozen=True)
class Calibration:
    """Equal-count D bins against the miss rate; r and p are None with fewer than 3 bins."""
    similarity_weight: float
    questions: int
    bins: list[CalibrationBin]
    r: float | None
    p: float | None
    note: str | None = None


@dataclass(frozen=True)
class SimilarityWeightFit:
    """lambda read off a run; None (with the note saying why) where the run gives no usable line."""
    similarity_weight: float | None
    hop_slope: float
    similarity_slope: float
    questions: int
    note: str | None = None
    hop_values: list[int] = field(default_factory=list)


def points_from_results(results: Iterable[Mapping[str, Any]], *, at: int = 10, rule: str = "official") -> list[DifficultyPoint]:
    """The points of a run's results.json rows: those with a difficulty (gold chunks) and a Recall@`at`.

    `rule` official reads the official rule's Recall@K (the run must have been scored with it);
    ours reads the gold-chunk rule's.
    """
    key = f"recall@{at}"
    points = []
    for row in results:
        d = row.get("difficulty")
        scores = row.get("official") if rule == "official" else (row.get("scores") or {}).get("ranking")
        if not d or not scores or key not in scores:
            continue
        points.append(DifficultyPoint(int(d["hops"]), float(d["similarity"]), float(scores[key])))
    return points


def equal_count_bins(points: Sequence[DifficultyPoint], similarity_weight: float, bins: int) -> list[CalibrationBin]:
    """`bins` bins of about the same number of questions by D (fewer where D values tie)."""
    values = [p.value(similarity_weight) for p in points]
    edges = quantile_edges(values, bins)
    out = []
    for low, high in pairwise(edges):
        held = [(v, p) for v, p in zip(values, points) if low <= v < high]
        if held:
            out.append(CalibrationBin(low, high, len(held), statistics.fmean(v for v, _ in held),
                                      1.0 - statistics.fmean(p.recall for _, p in held)))
    return out


def pearson(bins: Sequence[CalibrationBin]) -> tuple[float | None, float | None]:
    """Pearson r (and its p-value) between the bins' mean D and their miss rates; None under 3 bins."""
    from scipy.stats import pearsonr

    if len(bins) < 3 or len({b.miss_rate for b in bins}) < 2:
        return None, None
    result = pearsonr([b.mean_difficulty for b in bins], [b.miss_rate for b in bins])
    return float(result.statistic), float(result.pvalue)


def calibrate(points: Sequence[DifficultyPoint], similarity_weight: float = 1.0, *, min_bin: int = 50,
              max_bins: int = 10) -> Calibration:
    """The most equal-count bins, up to `max_bins`, that each hold at least `min_bin` questions, and their r."""
    for count in range(min(max_bins, len(points) // max(min_bin, 1)), 2, -1):
        bins = equal_count_bins(points, similarity_weight, count)
        if len(bins) >= 3 and all(b.questions >= min_bin for b in bins):
            r, p = pearson(bins)
            return Calibration(similarity_weight, len(points), bins, r, p,
                               note=None if r is not None else "the bins' miss rates do not vary")
    note = (f"{len(points)} questions make fewer than 3 bins of at least {min_bin}"
            if len(points) < 3 * max(min_bin, 1) else
            f"D takes too few distinct values to make 3 bins of at least {min_bin} questions")
    return Calibration(similarity_weight, len(points), [], None, None, note=note)


def shown_weight(weight: float) -> float:
    """A fitted weight as reports give it and users pass it: three significant digits."""
    return float(f"{weight:.3g}")


@dataclass(frozen=True)
class CalibrationReport:
    """A weight fitted on one run, and how D orders the misses of that run and of others with it."""
    fit: SimilarityWeightFit
    weight: float | None                           # the fitted weight as shown (None: none fitted)
    weights: list[float]                           # 1 (MHTS), and the fitted weight when it differs
    runs: dict[str, dict[str, Calibration]]        # run label -> f"{weight:g}" -> its calibration
    similarity_alone: dict[str, Calibration]       # run label -> D = -s (how much the hop term adds)


def calibration_report(fit_on: tuple[str, Sequence[DifficultyPoint]],
                       checks: Mapping[str, Sequence[DifficultyPoint]] | None = None, *,
                       min_bin: int = 50, max_bins: int = 10) -> CalibrationReport:
    """Fit the weight on `fit_on` (label, points); calibrate it and every run of `checks` with lambda 1,
    with the fitted weight, and with s alone."""
    label, points = fit_on
    fit = fit_similarity_weight(points)
    weight = shown_weight(fit.similarity_weight) if fit.similarity_weight is not None else None
    weights = list(dict.fromkeys([1.0] + ([weight] if weight is not None else [])))
    runs: dict[str, dict[str, Calibration]] = {}
    alone: dict[str, Calibration] = {}
    for name, found in {label: points, **(checks or {})}.items():
        runs[name] = {f"{w:g}": calibrate(found, w, min_bin=min_bin, max_bins=max_bins) for w in weights}
        alone[name] = calibrate([DifficultyPoint(0, p.similarity, p.recall) for p in found], 1.0,
                                min_bin=min_bin, max_bins=max_bins)
    return CalibrationReport(fit, weight, weights, runs, alone)


def fit_similarity_weight(points: Sequence[DifficultyPoint]) -> SimilarityWeightFit:
    """lambda = -(slope on s) / (slope on h) of the least-squares line miss ~ h + s over the questions."""
    from sklearn.linear_model import LinearRegression

    hop_values = sorted({p.hops for p in points})
    if len(points) < 3:
        raise MhgraphError(f"{len(points)} scored questions with gold evidence: too few to fit the similarity weight")
    x = np.array([[p.hops, p.similarity] for p in points], dtype=np.float64)
    y = np.array([1.0 - p.recall for p in points], dtype=np.float64)
    if len(hop_values) < 2:
        # one value of h: D orders the questions by s alone, whatever the (positive) weight
        slope = float(LinearRegression().fit(x[:, 1:], y).coef_[0])
        return SimilarityWeightFit(None, 0.0, slope, len(points), hop_values=hop_values,
                                   note=f"every question has h = {hop_values[0]}: any positive weight orders them alike")
    hop_slope, similarity_slope = (float(c) for c in LinearRegression().fit(x, y).coef_)
    if hop_slope <= 0 or similarity_slope >= 0:
        return SimilarityWeightFit(None, hop_slope, similarity_slope, len(points), hop_values=hop_values,
                                   note="the misses do not rise with h and fall with s on this run")
    return SimilarityWeightFit(-similarity_slope / hop_slope, hop_slope, similarity_slope, len(points),
                               hop_values=hop_values)

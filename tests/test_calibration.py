"""Difficulty calibration (mhgraph.eval.calibration): the bins, their r, the fitted similarity weight."""

from __future__ import annotations

import numpy as np
import pytest
from pytest import approx

from mhgraph.errors import MhgraphError
from mhgraph.eval.calibration import (
    DifficultyPoint,
    calibrate,
    equal_count_bins,
    fit_similarity_weight,
    points_from_results,
)
from mhgraph.eval.difficulty import DIFFICULTY_EDGES, report_edges


def _points(weight: float, n: int = 600, seed: int = 0, hop_slope: float = 0.1) -> list[DifficultyPoint]:
    """Questions whose miss is exactly linear in D = h - weight * s (recall = 1 - miss)."""
    rng = np.random.default_rng(seed)
    hops = rng.integers(2, 5, n)
    s = rng.uniform(0.2, 0.7, n)
    miss = 0.2 + hop_slope * (hops - weight * s)
    return [DifficultyPoint(int(h), float(x), float(1 - m)) for h, x, m in zip(hops, s, miss)]


def test_fit_recovers_the_weight_the_misses_were_made_with() -> None:
    for weight in (1.0, 4.0, 12.0):
        fit = fit_similarity_weight(_points(weight))
        assert fit.similarity_weight == approx(weight, rel=1e-6)
        assert fit.hop_slope == approx(0.1) and fit.similarity_slope == approx(-0.1 * weight)
        assert fit.questions == 600 and fit.hop_values == [2, 3, 4] and fit.note is None


def test_the_fitted_weight_orders_the_misses_and_the_published_one_less_so() -> None:
    points = _points(12.0)
    fitted = calibrate(points, 12.0)
    published = calibrate(points, 1.0)
    assert fitted.r == approx(1.0) and fitted.p < 1e-6
    assert published.r < 0.95
    assert len(fitted.bins) == 10 and all(b.questions >= 50 for b in fitted.bins)
    assert sum(b.questions for b in fitted.bins) == 600
    # a bin's miss rate is the mean miss of its questions
    low, high = fitted.bins[0].low, fitted.bins[0].high
    held = [p for p in points if low <= p.value(12.0) < high]
    assert fitted.bins[0].miss_rate == approx(np.mean([1 - p.recall for p in held]))


def test_bins_shrink_to_hold_the_minimum_and_too_few_questions_give_no_r() -> None:
    points = _points(2.0, n=180)
    cal = calibrate(points, 2.0, min_bin=50)
    assert len(cal.bins) == 3 and all(b.questions >= 50 for b in cal.bins) and cal.r is not None
    few = calibrate(points[:120], 2.0, min_bin=50)
    assert few.bins == [] and few.r is None and "120 questions make fewer than 3 bins of at least 50" == few.note
    assert len(equal_count_bins(points, 2.0, 4)) == 4


def test_no_weight_where_the_run_gives_no_usable_line() -> None:
    one_hop_count = [DifficultyPoint(2, p.similarity, p.recall) for p in _points(3.0)]
    fit = fit_similarity_weight(one_hop_count)
    assert fit.similarity_weight is None and "every question has h = 2" in fit.note
    # misses that fall with h: no positive weight makes D order them
    falling = fit_similarity_weight(_points(3.0, hop_slope=-0.1))
    assert falling.similarity_weight is None and falling.hop_slope < 0 and "do not rise with h" in falling.note
    with pytest.raises(MhgraphError, match="too few to fit"):
        fit_similarity_weight(one_hop_count[:2])


def test_points_come_from_a_runs_results_rows() -> None:
    rows = [
        {"id": "a", "difficulty": {"hops": 2, "similarity": 0.5, "value": 1.5},
         "official": {"recall@10": 0.5}, "scores": {"ranking": {"recall@10": 1.0}}},
        {"id": "b", "difficulty": None, "official": {"recall@10": 1.0}},           # a null question
        {"id": "c", "difficulty": {"hops": 3, "similarity": 0.25, "value": 2.75}},  # scored by our rule only
    ]
    assert points_from_results(rows) == [DifficultyPoint(2, 0.5, 0.5)]
    assert points_from_results(rows, rule="ours") == [DifficultyPoint(2, 0.5, 1.0)]
    assert points_from_results(rows, at=4) == []


def test_report_edges_are_fixed_for_the_published_weight_else_equal_count() -> None:
    assert report_edges([1.2, 2.5], 1.0) == DIFFICULTY_EDGES
    edges = report_edges([-9.0, -7.0, -5.0, -3.0, -1.0], 8.0, bins=2)
    assert edges[0] == -9.0 and edges[-1] > -1.0 and len(edges) == 3

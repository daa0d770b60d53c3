"""Difficulty calibration (mhgraph.eval.calibration): the bins, their r, the fitted similarity weight."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
    # D with two values makes two bins, however many questions: no r, and the note says why
    two = [DifficultyPoint(2 + i % 2, 0.5, 0.5 + 0.1 * (i % 3)) for i in range(600)]
    tied = calibrate(two, 1.0)
    assert tied.bins == [] and tied.r is None and tied.note == (
        "D takes too few distinct values to make 3 bins of at least 50 questions")
    flat = calibrate([DifficultyPoint(2, p.similarity, 0.5) for p in points], 1.0)
    assert flat.r is None and flat.note == "the bins' miss rates do not vary" and len(flat.bins) == 3


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


def _results_file(folder: Path, points: list[DifficultyPoint]) -> Path:
    """A run's results.json holding just what calibration reads."""
    folder.mkdir(parents=True)
    rows = [{"id": f"q{i}", "difficulty": {"hops": p.hops, "similarity": p.similarity, "value": p.value(1.0)},
             "official": {"recall@10": p.recall}} for i, p in enumerate(points)]
    (folder / "results.json").write_text(json.dumps(rows), encoding="utf-8")
    return folder


def _calibrate_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mhgraph.cli", "runs", "calibrate", *args],
                          capture_output=True, text=True, timeout=300, check=False)


def test_runs_calibrate_fits_on_one_run_and_checks_on_another(tmp_path: Path) -> None:
    generated = _results_file(tmp_path / "generated", _points(12.0))
    real = _results_file(tmp_path / "real", _points(12.0, n=900, seed=1))
    out = _calibrate_cli(str(generated), "--check", str(real))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[1] == "least-squares miss: +0.100 per hop, -1.200 per unit of s; similarity weight lambda = 12"
    assert lines[-2] == "use it: mhgraph eval --similarity-weight 12 ...; mhgraph generate --similarity-weight 12 ..."
    written = json.loads((generated / "calibration.json").read_text(encoding="utf-8"))
    assert written["weight"] == 12 and written["weights"] == [1.0, 12.0] and written["rule"] == "official"
    for run in (generated, real):
        by_weight = written["runs"][str(run / "results.json")]
        assert by_weight["12"]["r"] == approx(1.0) and by_weight["1"]["r"] < 0.95
        assert all(b["questions"] >= 50 for b in by_weight["12"]["bins"])
        assert f"checked on {real / 'results.json'}: lambda 12: r 1.000" in out.stdout
    # misses that fall with h: no weight, said so, and nothing to pass on
    falling = _results_file(tmp_path / "falling", _points(3.0, hop_slope=-0.1))
    none = _calibrate_cli(str(falling))
    assert none.returncode == 0, none.stderr
    assert "no weight fitted: the misses do not rise with h and fall with s on this run" in none.stdout
    assert "use it:" not in none.stdout
    assert json.loads((falling / "calibration.json").read_text(encoding="utf-8"))["weight"] is None

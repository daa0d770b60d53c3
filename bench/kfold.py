"""The k-fold choice by question that bench reports make among evaluation runs: per fold, the run
with the best mean official `select_by` on the other folds, scored on that fold. A question's fold
comes from its id, so every report folds the same questions together."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from statistics import fmean

FOLDS = 5
SELECT_BY = "recall@10"

# run -> question id -> official metric -> score
Scores = Mapping[str, Mapping[str, Mapping[str, float]]]


def fold_of(question_id: str) -> int:
    return int(hashlib.sha256(question_id.encode()).hexdigest(), 16) % FOLDS


def official_scores(folder: Path) -> dict[str, dict[str, float]]:
    """A run folder's per-question official scores (questions with evidence facts only)."""
    return {r["id"]: r["official"] for r in json.loads((folder / "results.json").read_text())
            if r.get("official") and r["official"].get("facts")}


def choose(scores: Scores, among: Sequence[str], questions: Sequence[str], metrics: Sequence[str],
           select_by: str = SELECT_BY) -> tuple[list[dict], dict[str, float]]:
    """(per fold: the run chosen on the other folds and its scores on this one; the held-out means)."""
    folds = {q: fold_of(q) for q in questions}

    def mean(run: str, metric: str, subset: list[str]) -> float:
        return fmean(scores[run][q][metric] for q in subset)

    chosen, held = [], {m: [] for m in metrics}
    for k in range(FOLDS):
        train = [q for q in questions if folds[q] != k]
        test = [q for q in questions if folds[q] == k]
        best = max(among, key=lambda r: (mean(r, select_by, train), r))
        chosen.append({"fold": k, "chosen": best, "train_questions": len(train), "test_questions": len(test),
                       **{m: mean(best, m, test) for m in metrics}})
        for m in metrics:
            held[m] += [scores[best][q][m] for q in test]
    return chosen, {m: fmean(held[m]) for m in metrics}

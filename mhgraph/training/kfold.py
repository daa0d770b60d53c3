"""The loop both trainers run over k-fold splits: one model per fold, trained on every other fold's
questions, in `fold-<i>/`, and one more on every question in `all/` (FINAL_MODEL), for users and
never for scoring these questions.

What each model is, how it is trained and what its row in folds.json says stay with its trainer
(treehop.py, reranker.py): the loop hands each one a Fold (its folder, the questions it trains on,
the questions it must never see) and collects the rows; KFold.save writes folds.json.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Generic, Sequence, TypeVar

from mhgraph.errors import MhgraphError
from mhgraph.training.folds import FINAL_MODEL, KFold

Q = TypeVar("Q")     # a question: anything with the text it is split by in .query


@dataclass(frozen=True)
class Fold(Generic[Q]):
    """One model to train: the folder it is saved in, the questions it trains on and those it must not see."""
    directory: Path              # <out>/fold-<i>, or <out>/all for the final model
    index: int | None            # the fold; None for the final model
    training: list[Q]
    held_out: list[Q]            # the final model: none

    @property
    def name(self) -> str:
        return self.directory.name


@dataclass(frozen=True)
class FoldModels:
    """What the models trained: folds.json's "models", "folds" and "final"."""
    models: list[str]                     # the fold models' folders (relative to the output folder), by fold
    folds: list[dict[str, Any]]           # per fold: {"fold": i, **the trainer's row}
    final: dict[str, Any] | None          # the trainer's row for the final model; None when none was trained


def train_fold_models(questions: Sequence[Q], kfold: KFold, out: Path,
                      fold_model: Callable[[Fold[Q]], dict[str, Any]] | None,
                      final_model: Callable[[Fold[Q]], dict[str, Any]] | None) -> FoldModels:
    """fold_model(fold) trains and saves the model of one fold (None: no fold models), final_model
    the one on every question (None: none); each returns its row for folds.json."""
    splits = kfold.split(questions, lambda q: q.query) if fold_model is not None else []
    empty = [i for i, (_, held_out) in enumerate(splits) if not held_out]
    if empty:   # a fold model that scores no question: trained on every one, and no k-fold model at all
        raise MhgraphError(f"{len(empty)} of {kfold.k} folds hold out no question ({len(questions)} questions): "
                           "use fewer --folds")
    out.mkdir(parents=True, exist_ok=True)
    models, rows = [], []
    for i, (training, held_out) in enumerate(splits):
        rows.append({"fold": i, **fold_model(Fold(out / f"fold-{i}", i, training, held_out))})
        models.append(f"fold-{i}")
    final = final_model(Fold(out / FINAL_MODEL, None, list(questions), [])) if final_model is not None else None
    return FoldModels(models, rows, final)

"""k-fold splits by question, so that no question is ever scored by a model that saw it.

A question's fold comes from a hash of its text (whitespace-normalised) and the seed, not from its
place in a file: the same question lands in the same fold whatever else the file holds, so a file
with questions added or removed (the held-back split) keeps every fold assignment, and a model
trained for a fold can be matched to any question by its text alone.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence, TypeVar

from mhgraph.errors import MhgraphError

T = TypeVar("T")
FOLDS_FILE = "folds.json"
FINAL_MODEL = "all"     # the model trained on every question (for users' own data), beside the fold models


def fold_of(question: str, k: int, seed: int = 0) -> int:
    digest = hashlib.sha256(f"{seed}\x1f{' '.join(question.split())}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % k


@dataclass(frozen=True)
class KFold:
    k: int
    seed: int = 0

    def __post_init__(self) -> None:
        if self.k < 2:
            raise MhgraphError(f"k-fold needs at least 2 folds (got {self.k})")

    def fold(self, question: str) -> int:
        return fold_of(question, self.k, self.seed)

    def split(self, items: Sequence[T], text: callable) -> list[tuple[list[T], list[T]]]:
        """Per fold: (training items: every other fold's, held-out items: this fold's)."""
        folds = [self.fold(text(item)) for item in items]
        return [([x for x, f in zip(items, folds) if f != i], [x for x, f in zip(items, folds) if f == i])
                for i in range(self.k)]

    def save(self, directory: Path, models: Iterable[str], **facts: object) -> dict:
        """folds.json: k, seed, the fold models' paths (relative to the folder) and what else to record;
        the record as written (read back, as a loader sees it)."""
        path = directory / FOLDS_FILE
        path.write_text(json.dumps({"k": self.k, "seed": self.seed, "models": list(models), **facts}, indent=2,
                                   default=str), encoding="utf-8")
        return json.loads(path.read_text(encoding="utf-8"))

    @staticmethod
    def load(directory: Path) -> tuple["KFold", dict]:
        path = directory / FOLDS_FILE
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
            return KFold(int(data["k"]), int(data.get("seed", 0))), data
        except FileNotFoundError:
            raise MhgraphError(f"{path}: not found (a k-fold model folder is made by 'mhgraph reranker train' "
                               f"or 'mhgraph treehop train')") from None
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise MhgraphError(f"{path}: not a k-fold description ({exc})") from None

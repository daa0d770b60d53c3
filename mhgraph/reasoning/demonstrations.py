"""Few-shot demonstrations for the language-model steps of IR-CoT and decomposition.

A fixed handful of development-split questions (demonstrations.json, matched by their text), each
with a reasoning chain and sub-questions written for it. Their paragraphs are the question's gold
evidence facts with the other demonstrations' facts as distractors, read at run time from the
benchmark's questions file (nothing of the benchmark is copied into the package); without that
file the demonstrations show the question and the chain alone. These questions are then left out
of every figure the methods report (`held_out`), whichever strategy (model or offline) runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Sequence

from mhgraph.benchmark import default_questions_path, load_questions
from mhgraph.errors import InputError

FILE = "reasoning/demonstrations.json"


@dataclass(frozen=True)
class Paragraph:
    source: str | None
    title: str | None
    published_at: str | None
    text: str

    def render(self) -> str:
        head = " | ".join(x for x in (self.source, self.published_at, self.title) if x)
        return f"{head}\n{self.text}" if head else self.text


@dataclass(frozen=True)
class Demonstration:
    question: str
    chain: tuple[str, ...]
    sub_questions: tuple[str, ...]
    paragraphs: tuple[Paragraph, ...] = ()


def _read_file() -> list[dict]:
    path = Path(str(resources.files("mhgraph").joinpath(FILE)))
    try:
        items = json.loads(path.read_text(encoding="utf-8"))["demonstrations"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(f"{path}: not a demonstrations file ({exc})") from exc
    for n, item in enumerate(items, start=1):
        for name in ("question", "chain", "sub_questions"):
            if not item.get(name):
                raise InputError(f"{path}: demonstration {n}: missing field '{name}'")
    return items


def held_out() -> frozenset[str]:
    """The texts of the demonstration questions: left out of every reported figure."""
    return frozenset(item["question"] for item in _read_file())


def load(questions: Sequence | None = None) -> list[Demonstration]:
    """The demonstrations, with paragraphs from `questions` (mhgraph.types.Question, the
    benchmark file's) where a demonstration's question is among them."""
    by_text = {q.query: q for q in questions or ()}
    items = _read_file()
    gold: list[tuple[Paragraph, ...]] = []
    for item in items:
        q = by_text.get(item["question"])
        gold.append(tuple(Paragraph(e.source, e.title, e.published_at.date().isoformat() if e.published_at else None,
                                    e.fact) for e in q.evidence) if q else ())
    out = []
    for i, item in enumerate(items):
        # one distractor: the first fact of the next demonstration, placed second so that the
        # gold paragraphs are not all on top
        other = gold[(i + 1) % len(items)][:1] if len(items) > 1 else ()
        paragraphs = gold[i][:1] + other + gold[i][1:] if gold[i] else ()
        out.append(Demonstration(item["question"], tuple(item["chain"]), tuple(item["sub_questions"]), paragraphs))
    return out


def benchmark_questions() -> list:
    """The benchmark's questions where the file is (for the demonstrations' paragraphs), else []."""
    path = default_questions_path()
    return load_questions(path) if path.is_file() else []

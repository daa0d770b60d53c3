"""`CombinedReranker`: several rerankers as one (`A+B`, e.g.
`kfold:models/reranker-onnx+sentences:all-MiniLM-L6-v2`): each one's scores standardised over
the passages, then averaged, so that no reranker's scale outweighs another's. A cross-encoder
reads the whole passage against the whole question; the sentence reranker finds the one sentence
that answers one part of it: they err on different chunks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from statistics import fmean

from mhgraph.rerank.base import Reranker, standardise

JOIN = "+"


def combined_parts(spec: str) -> list[str] | None:
    """The rerankers `spec` combines (`A+B`), or None where it names one (a path that exists may
    hold a "+")."""
    if JOIN not in spec or Path(spec).exists():
        return None
    return [part.strip() for part in spec.split(JOIN)]


class CombinedReranker:
    """The mean of the rerankers' standardised scores. Its fusion weight is the mean of theirs
    (a reranker without one counts 1); what a part records of its training (corpus_facts, the
    questions it saw) is the combination's, so a part trained in-domain labels the whole."""

    def __init__(self, parts: Sequence[Reranker]) -> None:
        if len(parts) < 2:
            raise ValueError("a combination needs two rerankers or more")
        if len({p.name for p in parts}) < len(parts):
            raise ValueError("a combination names one reranker twice")
        self.parts = list(parts)
        self.name = JOIN.join(p.name for p in self.parts)
        self.rerank_weight = fmean(float(getattr(p, "rerank_weight", 1.0)) for p in self.parts)
        # the first part that knows the corpus it learned on (an export without a record knows none)
        self.corpus_facts = next((facts for p in self.parts
                                  if (facts := getattr(p, "corpus_facts", None)) and facts.get("corpus")), None)
        self._seeing = [p for p in self.parts if callable(getattr(p, "saw", None))]

    def saw(self, question: str) -> bool:
        """Whether any part was trained on `question`: the combination's scores for it are not held out."""
        return any(p.saw(question) for p in self._seeing)

    def scores_by_part(self, query: str, passages: Sequence[str]) -> dict[str, list[float]]:
        """Each part's own scores, by its name (a trace shows what the mean is made of)."""
        return {p.name: p.score(query, passages) for p in self.parts}

    @staticmethod
    def combine(by_part: Mapping[str, Sequence[float]]) -> list[float]:
        """The parts' scores for the same passages as one: each standardised, then averaged."""
        return [fmean(values) for values in zip(*(standardise(s) for s in by_part.values()))]

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        return self.combine(self.scores_by_part(query, passages))

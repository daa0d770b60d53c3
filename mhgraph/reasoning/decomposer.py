"""Query decomposition's step: the question as N simpler sub-questions.

- `LLMDecomposer`: the model, with the demonstrations' decompositions as examples, returns JSON
  `{"sub_questions": [...]}` (validated by the LLM layer, repaired or asked again); more than N
  are cut to N, blanks and repeats dropped.
- `OfflineDecomposer`: no model, labelled as such in every report. The sub-questions are the
  question's clauses (mhgraph.reasoning.clauses: split where the question turns to another part,
  each with the outlets it names); more than N clauses are joined, shortest neighbours first;
  fewer than N, and the whole question is asked too, first. It never makes up more parts than the
  question has, so it may return fewer than N.
"""

from __future__ import annotations

import json
from typing import Protocol, Sequence

from pydantic import BaseModel, Field

from mhgraph.filters.sources import SourceCatalog
from mhgraph.llm import LLM
from mhgraph.reasoning.clauses import clauses, fit
from mhgraph.reasoning.demonstrations import Demonstration

OFFLINE_LABEL = "offline decomposer (no language model)"


class Decomposer(Protocol):
    label: str

    def decompose(self, question: str, n: int) -> list[str]:
        """At most n sub-questions. Raises mhgraph.llm.LLMError when the model fails."""
        ...


class SubQuestions(BaseModel):
    sub_questions: list[str] = Field(min_length=1)


def _distinct(items: Sequence[str], n: int) -> list[str]:
    """The first n non-blank items, one of those that differ only in case or end punctuation."""
    out: dict[str, str] = {}
    for item in items:
        text = " ".join(str(item).split())
        if text and (key := text.casefold().strip(" ?.!")) not in out:
            out[key] = text
    return list(out.values())[:n]


class LLMDecomposer:
    def __init__(self, llm: LLM, demonstrations: Sequence[Demonstration] = ()) -> None:
        self.llm = llm
        self.demonstrations = list(demonstrations)
        self.label = llm.label

    def messages(self, question: str, n: int) -> list[dict[str, str]]:
        system = ("You split a multi-hop question about news articles into simpler sub-questions, each answerable "
                  "from one article; keep the outlet names and dates the question gives. Reply with JSON only: "
                  '{"sub_questions": ["...", "..."]}.')
        shots = "\n\n".join(f"Question: {d.question}\n"
                            f"{{\"sub_questions\": [{', '.join(json.dumps(s) for s in d.sub_questions)}]}}"
                            for d in self.demonstrations)
        task = f"Split into exactly {n} sub-questions.\nQuestion: {question}"
        return [{"role": "system", "content": system},
                {"role": "user", "content": f"Examples:\n\n{shots}\n\n{task}" if shots else task}]

    def decompose(self, question: str, n: int) -> list[str]:
        found = self.llm.json(self.messages(question, n), SubQuestions, max_tokens=64 * n + 32)
        subs = _distinct(found.sub_questions, n)
        if not subs:
            self.llm.record_failure()
        return subs


class OfflineDecomposer:
    label = OFFLINE_LABEL

    def __init__(self, catalog: SourceCatalog | None = None) -> None:
        self.catalog = catalog

    def decompose(self, question: str, n: int) -> list[str]:
        parts = [c.query() for c in fit(clauses(question, self.catalog), n, self.catalog)]
        if len(parts) < n:
            parts = [question.strip(), *parts]
        return _distinct(parts, n)

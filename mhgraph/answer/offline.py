"""The answer strategy without a language model (llm_backend none): a heuristic floor, labelled as
such in every report, never presented as a model's answers.

- A yes/no question (it opens with an auxiliary verb) gets "Yes": the benchmark's comparison and
  temporal questions are answered Yes far more often than No.
- Any other question gets the capitalised name that the most evidence supports (each excerpt
  counts 1/rank), leaving out names the question itself contains: the benchmark's inference
  questions ask for a person, company or product named in the evidence.
- With no evidence, or no candidate name, it abstains.

It cites each document once, by the best-ranked excerpt that supports the answer.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Iterator, Sequence

from mhgraph.answer.reader import ABSTAIN, Answer, Citation
from mhgraph.types import RetrievedChunk

LABEL = "offline heuristic (no language model)"
YES_NO_OPENERS = frozenset(
    "is are was were do does did has have had can could will would should shall may might must".split())
_NAME = re.compile(r"\b[A-Z][\w&'.-]*[\w&](?:\s+[A-Z][\w&'.-]*[\w&])*")
# Capitalised because they start a sentence or a headline, not because they name something.
_NOT_NAMES = frozenset(
    "The A An This That These Those It Its In On At For From With By As But And Or If When While After Before "
    "He She They We You I His Her Their Our Your Yes No Not What Which Who How Why Where Also However According "
    "Mr Ms Mrs Dr Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May June "
    "July August September October November December".split())


def is_yes_no(question: str) -> bool:
    words = re.findall(r"[A-Za-z]+", question)
    return bool(words) and words[0].lower() in YES_NO_OPENERS


class OfflineReader:
    label = LABEL

    def answer(self, question: str, chunks: Sequence[RetrievedChunk]) -> Answer:
        if not chunks:
            return Answer(ABSTAIN, True, raw=ABSTAIN, reader=self.label)
        if is_yes_no(question):
            return self._answer("Yes", [1], chunks)
        support: dict[str, float] = defaultdict(float)
        where: dict[str, list[int]] = defaultdict(list)
        asked = question.lower()
        for n, chunk in enumerate(chunks, start=1):
            for name in dict.fromkeys(m.group(0) for m in _NAME.finditer(chunk.text)):
                if name in _NOT_NAMES or name.lower() in asked or len(name) < 3:
                    continue
                support[name] += 1 / n
                where[name].append(n)
        if not support:
            return Answer(ABSTAIN, True, raw=ABSTAIN, reader=self.label, evidence=len(chunks))
        best = max(support, key=lambda name: (support[name], len(name)))
        return self._answer(best, where[best], chunks)

    def _answer(self, text: str, numbers: list[int], chunks: Sequence[RetrievedChunk]) -> Answer:
        # each document cited once, by its best-ranked excerpt (numbers come in rank order)
        firsts: dict[str, int] = {}
        for n in numbers:
            firsts.setdefault(chunks[n - 1].document_id or chunks[n - 1].chunk_id, n)
        numbers = list(firsts.values())
        citations = [Citation.of(n, chunks) for n in numbers]
        raw = text + " " + "".join(f"[{n}]" for n in numbers)
        return Answer(text, False, citations, raw, self.label, None, len(chunks))

    def stream(self, question: str, chunks: Sequence[RetrievedChunk]) -> Iterator[str | Answer]:
        answer = self.answer(question, chunks)
        yield answer.raw
        yield answer

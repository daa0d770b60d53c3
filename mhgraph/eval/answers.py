"""Scoring answers against the benchmark's gold answers.

- `official`: the rule of MultiHop-RAG's qa_evaluate.py (Tang & Yang, 2024; repository
  yixuantt/MultiHop-RAG): take the text inside `The answer to the question is "..."` when the
  reply says "The answer", lower-case both sides, and count the answer correct when it shares at
  least one whitespace-separated word with the gold answer. Lenient: "Insufficient information."
  and "No information" share nothing, but "The Verge" matches any gold answer containing "the".
- `exact`: normalised exact match (lower-case, punctuation and articles removed, whitespace
  collapsed; SQuAD's normalisation), stricter and ours.
- Abstention apart: on null questions (gold "Insufficient information.") the share that abstained;
  on answerable questions the share that wrongly abstained.
Failed answers (model unreachable, empty reply) count as wrong and are counted.
"""

from __future__ import annotations

import re
import string
from collections import defaultdict
from typing import Any, Iterable, Sequence

from mhgraph.answer.reader import CITATION, Answer, is_abstention
from mhgraph.types import Question

_OFFICIAL_ANSWER = re.compile(r'The answer to the question is "(.*?)"')


def official_correct(prediction: str, gold: str) -> bool:
    if "The answer" in prediction:
        if match := _OFFICIAL_ANSWER.search(prediction):
            prediction = match.group(1)
    return bool(set(prediction.lower().split()) & set(gold.lower().split()))


def normalise(text: str) -> str:
    text = "".join(ch for ch in text.lower() if ch not in string.punctuation)
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def exact_correct(prediction: str, gold: str) -> bool:
    if is_abstention(gold):
        return is_abstention(prediction)
    return normalise(prediction) == normalise(gold)


def score_answer(question: Question, answer: Answer) -> dict[str, Any]:
    # the whole reply, as qa_evaluate.py reads it, less the [n] markers this project's prompt adds
    reply = CITATION.sub(" ", answer.raw or answer.text)
    return {"official": official_correct(reply, question.answer) if not answer.failed else False,
            "exact": exact_correct(answer.text, question.answer) if not answer.failed else False}


def _rates(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    return {"questions": n,
            "official": sum(r["official"] for r in rows) / n if n else None,
            "exact": sum(r["exact"] for r in rows) / n if n else None,
            "failed": sum(r["failed"] for r in rows)}


def summarise_answers(questions: Iterable[Question], answers: dict[str, Answer], scores: dict[str, dict[str, Any]],
                      *, reader: str, top_k: int, usage: dict[str, Any] | None) -> dict[str, Any]:
    rows, by_type = [], defaultdict(list)
    null_abstained, null_total, wrong_abstained, answerable = 0, 0, 0, 0
    for q in questions:
        answer = answers[q.id]
        row = {**scores[q.id], "failed": answer.failed is not None}
        rows.append(row)
        by_type[q.question_type].append(row)
        if is_abstention(q.answer):
            null_total += 1
            null_abstained += answer.abstained
        else:
            answerable += 1
            wrong_abstained += answer.abstained
    return {
        "reader": reader, "evidence_k": top_k, "overall": _rates(rows),
        "by_type": {t: _rates(r) for t, r in sorted(by_type.items())},
        "abstention": {"null_questions": null_total,
                       "abstained_on_null": null_abstained / null_total if null_total else None,
                       "answerable_questions": answerable,
                       "wrongly_abstained": wrong_abstained / answerable if answerable else None},
        "usage": usage,
        "rule": "official: MultiHop-RAG qa_evaluate.py (a shared lower-cased word with the gold answer); "
                "exact: normalised exact match",
    }

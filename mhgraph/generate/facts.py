"""Evidence facts quoted verbatim: a claim is restated (pronouns resolved, or paraphrased by a
model), so the fact that stands for it in a question is the sentence of its chunk that says it.

A chunk is split into sentences where a sentence-ending mark (., !, ?, possibly followed by a
closing quote or bracket) meets whitespace, and at line breaks. A claim maps to the sentence
that holds the largest share of the claim's content words (lower-cased words of two or more
letters, and numbers); it maps to nothing when that share is below `MIN_COVERAGE`. The returned
fact is a slice of the chunk's text, so it is verbatim in the chunk and hence in its article.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

MIN_COVERAGE = 0.6
MIN_FACT_CHARS = 20
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'\u201d\u2019)\]]*\s+|\n+")
_INITIALS = re.compile(r"[(\"']?(?:[A-Za-z]\.)*[A-Za-z]")     # "U.S" (its last stop is the match's), "J"
ABBREVIATIONS = frozenset(["mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "inc", "ltd", "co", "corp", "vs", "etc", "no", "gen", "gov", "sen", "rep", "lt", "col", "sgt", "capt", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "approx", "est", "dept", "univ"])
_WORD = re.compile(r"[^\W_]{2,}|\d+(?:[.,]\d+)*")


@dataclass(frozen=True)
class Sentence:
    start: int        # [start, end) in the chunk's text
    end: int
    text: str


def sentences(text: str) -> list[Sentence]:
    """The sentences of `text` as spans of it, stripped, empty ones left out. A full stop after an
    abbreviation or initial ("U.S.", "Mr.", "J.") ends no sentence, nor one followed by a
    lower-case word."""
    out: list[Sentence] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        if "\n" not in match.group(0) and _abbreviation(text, match.start(), match.end()):
            continue
        _append(out, text, start, match.end())   # closing quotes stay with their sentence
        start = match.end()
    _append(out, text, start, len(text))
    return out


def _abbreviation(text: str, end: int, next_start: int) -> bool:
    if next_start < len(text) and text[next_start].islower():
        return True
    if text[end - 1] != ".":
        return False
    word = text[:end - 1].rsplit(None, 1)[-1] if text[:end - 1].strip() else ""
    return bool(_INITIALS.fullmatch(word)) or word.lower().strip("(\"'") in ABBREVIATIONS


def _append(out: list[Sentence], text: str, start: int, end: int) -> None:
    piece = text[start:end]
    stripped = piece.strip()
    if stripped:
        lead = len(piece) - len(piece.lstrip())
        out.append(Sentence(start + lead, start + lead + len(stripped), stripped))


def content_words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def coverage(claim: str, sentence: str) -> float:
    """The share of the claim's content words that the sentence holds."""
    wanted = content_words(claim)
    return len(wanted & content_words(sentence)) / len(wanted) if wanted else 0.0


def best_sentence(claim: str, candidates: Sequence[Sentence], min_coverage: float = MIN_COVERAGE) -> Sentence | None:
    """The candidate that holds most of the claim's words (the earlier on ties), or None."""
    best, best_score = None, min_coverage
    for s in candidates:
        if len(s.text) < MIN_FACT_CHARS:
            continue
        score = coverage(claim, s.text)
        if score > best_score or (best is None and score >= best_score):
            best, best_score = s, score
    return best

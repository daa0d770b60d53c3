"""The offline reading of a question: its clauses, each with the sources it names and its content
words. Both offline strategies start here: the decomposer's sub-questions are the clauses, and
IR-CoT's offline reasoner looks for evidence of the clause the paragraphs so far support least.

A clause ends where the question turns to another part of what it asks:
- at every comma and the space after it (", while", ", and", ", saw ..."; not "$5,000" nor
  "November 29, 2023") and at "; ";
- at " while" / " whereas";
- at " and the ..." / " and a ..." / " compared to the ..." followed by another article or
  outlet ("the TechCrunch article on X and the Verge article on Y");
- at " and by|in|from|according to ...": another outlet's part ("reported by Fortune as X and by
  TechCrunch as Y").
A piece with fewer than MIN_TERMS content words (e.g. "as reported by both The Verge and
TechCrunch") is joined to the clause before it, or the one after when it comes first. Source
names are read from the graph (mhgraph.filters.sources), never from a list written by hand.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mhgraph.filters.sources import SourceCatalog
from mhgraph.reasoning.text import content_words

MIN_TERMS = 3
_SPLIT = re.compile(
    r",\s+(?!\d{4}\b)(?:(?:and|while|whereas|but|yet)\s+)?"
    r"|\s+(?:while|whereas)\s+"
    r"|;\s*"
    r"|\s+and\s+(?=(?:by|in|from|according\s+to)\s)"
    r"|\s+(?:and|compared\s+(?:to|with)|versus|than)\s+(?=(?:the|a|an)\s+['\u2018\"]?[A-Z])",
)
_LEAD = re.compile(r"^(?:and|but|also|then|both|does|do|did|is|was|are|were|has|have|had)\s+", re.IGNORECASE)


@dataclass(frozen=True)
class Clause:
    text: str
    sources: tuple[str, ...]      # source names (as the graph has them) the clause mentions
    terms: frozenset[str]         # its content words, the source names' words left out

    def query(self) -> str:
        """The clause as a search query: its text, without a leading connective or the question mark."""
        text = _LEAD.sub("", self.text.strip(" ,;?")).strip()
        return text or self.text


def _clause(text: str, catalog: SourceCatalog | None) -> Clause:
    sources: tuple[str, ...] = ()
    bare = text
    if catalog is not None:
        spans = catalog.spans(text)
        sources = tuple(dict.fromkeys(name for _, _, names in spans for name in names))
        for start, end, _ in reversed(spans):   # the outlet's words are not what to look for
            bare = bare[:start] + " " + bare[end:]
    return Clause(text.strip(), sources, frozenset(content_words(bare)))


def clauses(question: str, catalog: SourceCatalog | None = None) -> list[Clause]:
    """The clauses of `question`, in order (at least one: the question itself)."""
    pieces = [p for p in _SPLIT.split(question.strip()) if p and p.strip(" ,;?")]
    found = [_clause(p, catalog) for p in pieces] or [_clause(question, catalog)]
    merged: list[Clause] = []
    for c in found:
        if merged and (len(c.terms) < MIN_TERMS or len(merged[-1].terms) < MIN_TERMS):
            merged[-1] = _clause(f"{merged[-1].text}, {c.text}", catalog)
        else:
            merged.append(c)
    return merged


def fit(parts: list[Clause], n: int, catalog: SourceCatalog | None = None) -> list[Clause]:
    """At most `n` clauses: the shortest adjacent pair joined until n are left."""
    parts = list(parts)
    while len(parts) > n:
        i = min(range(len(parts) - 1), key=lambda j: len(parts[j].terms) + len(parts[j + 1].terms))
        parts[i:i + 2] = [_clause(f"{parts[i].text}, {parts[i + 1].text}", catalog)]
    return parts

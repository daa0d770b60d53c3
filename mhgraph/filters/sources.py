"""Source names as the graph has them, and the ways a question (or a model) writes them.

Every name comes from the Source nodes of the corpus; nothing is written by hand for a benchmark.
Each name gets variants derived from its own text:
- the whole name ("The Verge"), and without a leading "The" ("Verge");
- the part before a section separator, " | ", " - " or ": " ("Cnbc | World Business News Leader"
  -> "Cnbc"; "FOX News - Health" -> "FOX News"; "Live Science: The Most ..." -> "Live Science");
- an acronym before a trailing "News" ("BBC News - ..." -> "BBC"), matched in capitals only, so
  that the word "fox" in a question does not name FOX News.
Matching ignores case (except for those acronyms), punctuation and possessives ("TechCrunch's
article" -> TechCrunch) but wants a capital letter in what it matches (names are proper nouns:
"on the verge of" names no outlet), and takes the longest variant at each place in the text, so
"The Independent - Life and Style" names that section while "The Independent" alone names every
section of The Independent. A variant shared by several sources names all of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable

import neo4j

from mhgraph import cypher

SEPARATORS = re.compile(r"\s+\|\s+|\s+-\s+|:\s+")
ACRONYM_NEWS = re.compile(r"^([A-Z]{2,})\s+News$")


def normalize(text: str) -> str:
    """Lower case, apostrophes and possessive s dropped, every other non-alphanumeric a space."""
    text = text.casefold().replace("\u2019", "'")
    text = re.sub(r"'s\b|'", "", text)
    return " ".join(re.sub(r"[^0-9a-z]+", " ", text).split())


def _drop_the(text: str) -> str:
    return text[4:] if text.lower().startswith("the ") else text


def variants(name: str) -> tuple[set[str], set[str]]:
    """(case-insensitive variants, normalized; case-sensitive acronym variants) of one source name."""
    loose: set[str] = set()
    exact: set[str] = set()
    head = SEPARATORS.split(name, maxsplit=1)[0].strip()
    for form in {name, head}:
        for text, shortest in ((form, 3), (_drop_the(form), 4)):   # "The Age" yes, "Age" alone no
            if len(norm := normalize(text)) >= shortest:
                loose.add(norm)
        if acronym := ACRONYM_NEWS.match(form):
            exact.add(acronym[1])
    return loose, exact


def _pattern(variant: str) -> str:
    """A normalized variant as a pattern over raw text: words apart by any non-alphanumerics."""
    return r"\b" + r"[\W_]+".join(map(re.escape, variant.split())) + r"\b"


@dataclass
class SourceCatalog:
    """The corpus's source names and a matcher of their variants."""

    names: tuple[str, ...]
    _by_variant: dict[str, set[str]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        acronyms: dict[str, set[str]] = {}
        for name in self.names:
            loose, exact = variants(name)
            for v in loose:
                self._by_variant.setdefault(v, set()).add(name)
            for v in exact:
                acronyms.setdefault(v, set()).add(name)
        self._by_acronym = acronyms
        # longest first, so that at each position the alternation takes the longest variant
        ordered = sorted(self._by_variant, key=len, reverse=True)
        self._loose = re.compile("|".join(map(_pattern, ordered)), re.IGNORECASE) if ordered else None
        self._exact = re.compile("|".join(map(_pattern, sorted(acronyms, key=len, reverse=True)))) if acronyms else None

    @classmethod
    def from_graph(cls, driver: neo4j.Driver, database: str | None, corpus: str) -> "SourceCatalog":
        records, _, _ = driver.execute_query(cypher.load("filters/source_names"), corpus=corpus, database_=database,
                                             routing_=neo4j.RoutingControl.READ)
        return cls(tuple(r["name"] for r in records))

    def find(self, text: str, *, capitalised: bool = True) -> list[str]:
        """The sources `text` names, in the order it first names them. capitalised=False also
        takes names written in lower case (a model's or a file's list of outlets, not prose)."""
        found: dict[str, None] = {}
        for _, _, names in self.spans(text, capitalised=capitalised):
            for name in names:
                found.setdefault(name, None)
        return list(found)

    def spans(self, text: str, *, capitalised: bool = True) -> list[tuple[int, int, list[str]]]:
        """Where `text` names sources: (start, end, the source names) in text order, the longest
        variant at each place."""
        hits: list[tuple[int, int, set[str]]] = []
        if self._loose is not None:
            hits += [(m.start(), m.end(), self._by_variant[normalize(m.group())]) for m in self._loose.finditer(text)
                     if not capitalised or any(c.isupper() for c in m.group())]
        if self._exact is not None:
            hits += [(m.start(), m.end(), self._by_acronym[m.group()]) for m in self._exact.finditer(text)]
        out: list[tuple[int, int, list[str]]] = []
        taken_to = -1
        for start, end, names in sorted(hits, key=lambda h: (h[0], h[0] - h[1])):   # longest first at a place
            if start < taken_to:   # inside a longer name already matched ("FOX" in "FOX News - Health")
                continue
            taken_to = end
            out.append((start, end, sorted(names)))
        return out

    def resolve(self, names: Iterable[str]) -> tuple[list[str], list[str]]:
        """Names someone wrote (a model's filter, a reference file) -> (source names of the graph,
        the names that match none, which are dropped and reported)."""
        resolved: dict[str, None] = {}
        unknown: list[str] = []
        for name in names:
            if name in self.names:
                resolved.setdefault(name, None)
                continue
            matches = self.find(name, capitalised=False)
            if not matches:
                unknown.append(name)
            for m in matches:
                resolved.setdefault(m, None)
        return list(resolved), unknown

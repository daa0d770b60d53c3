"""The words a question names its metadata filter with, and the question without them.

Once a filter holds the sources and publication dates a question names, the words naming them
("TechCrunch", "October 7, 2023") no longer tell one admitted chunk from another: every chunk
inside the filter is from those sources and days. In a keyword (BM25) query they only favour
chunks whose text happens to repeat an outlet's name or a date. A self-querying retriever splits a
question the same way, into a structured filter and the text left for the search.

The words are found in the question's own text whatever extractor read the filter (rules, a
model, a reference file): the places the corpus's source names are written as names, with a
capital, as the rules find them (SourceCatalog.spans; "a fortune" names no outlet), where the
filter holds that source, and the date expressions whose days the filter's dates admit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

import neo4j

from mhgraph.filters.dates import expressions
from mhgraph.filters.extractors import corpus_span
from mhgraph.filters.model import MetadataFilter
from mhgraph.filters.sources import SourceCatalog

POSSESSIVE = re.compile(r"['\u2019]s\b")   # "TechCrunch's story": the 's goes with the name


@dataclass(frozen=True)
class FilterWords:
    """Finds and leaves out the words naming a filter, with the corpus's source names and the span of
    its publication days (the year of a date written without one)."""

    catalog: SourceCatalog
    span: tuple[date, date] | None

    @classmethod
    def from_graph(cls, driver: neo4j.Driver, database: str | None, corpus: str) -> FilterWords:
        return cls(SourceCatalog.from_graph(driver, database, corpus), corpus_span(driver, database, corpus))

    def spans(self, question: str, filt: MetadataFilter) -> list[tuple[int, int]]:
        """Where `question` names what `filt` holds: (start, end) in text order."""
        named = set(filt.sources)
        found = [(start, end + len(m[0]) if (m := POSSESSIVE.match(question, end)) else end)
                 for start, end, names in self.catalog.spans(question) if named & set(names)]
        if filt.has_dates:
            found += [(e.start, e.end) for e in expressions(question, self.span)
                      if filt.admits_day(e.first) or filt.admits_day(e.last)]
        return sorted(found)

    def left_out(self, question: str, filt: MetadataFilter) -> str:
        """`question` without the words naming `filt`, spaces closed up; the question itself when
        nothing else is left (a question that is all metadata still needs a query)."""
        kept: list[str] = []
        at = 0
        for start, end in self.spans(question, filt):
            if start > at:
                kept.append(question[at:start])
            at = max(at, end)    # spans that overlap (a date inside a source's name) leave as one
        kept.append(question[at:])
        text = " ".join("".join(kept).split())
        return text if any(c.isalnum() for c in text) else question

"""`FilterExtraction`: the metadata filter a method read from one question and searched with
(metarag; treehop with its filter at every hop), as a typed diagnostics record.

A run's records are summarised as filter quality against each question's evidence (sources and
dates; mhgraph/filters/quality.py), agreement with the reference filters where the benchmark's
reference file lists the run's questions, and fallbacks to unfiltered search; traces put each
question's filter on its (:EvalRun)-[:ASKED]->(:Question) relationship.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping

from mhgraph import cypher
from mhgraph.filters.extractors import (
    Extraction,
    build_extractor,
    default_reference_path,
)
from mhgraph.filters.model import MetadataFilter
from mhgraph.filters.quality import summarise_quality
from mhgraph.markdown import fmt, table
from mhgraph.types import Diagnostics, RetrievalResult, RunContext

COLUMNS = {"source_precision": "source P", "source_recall": "source R", "date_precision": "date P",
           "date_recall": "date R", "evidence_admitted": "evidence admitted", "has_sources": "with sources",
           "has_dates": "with dates", "agrees_sources": "same sources as reference",
           "agrees_dates": "same dates as reference"}


@dataclass(frozen=True)
class FilterExtraction(Diagnostics):
    kind = "filters"

    extraction: Extraction
    fallback: bool                       # no usable filter: the search ran unfiltered
    extractor: str = ""
    candidates_found: int | None = None  # chunks the filtered search found (metarag)
    keywords: str | None = None          # the BM25 query, where the filter's words were left out of it

    @property
    def filter(self) -> MetadataFilter:
        return self.extraction.filter

    def to_json(self) -> dict[str, Any]:
        return {"extraction": self.extraction.to_json(), "fallback": self.fallback,
                **({"candidates_found": self.candidates_found} if self.candidates_found is not None else {}),
                **({"keywords": self.keywords} if self.keywords is not None else {})}

    def lines(self, result: RetrievalResult, width: int) -> list[str]:
        e = self.extraction
        return [f"filter ({self.extractor}): {e.filter.to_json() or 'none, unfiltered search'}"
                + (f"; dropped: {', '.join(e.dropped)}" if e.dropped else "")
                + (f"; {e.failure}" if e.failure else "")] \
            + ([f"keyword query without the filter's words: {self.keywords}"] if self.keywords is not None else [])

    @classmethod
    def summarise(cls, records: Mapping[str, "FilterExtraction"], run: RunContext) -> dict[str, Any]:
        """Filter quality against the evidence, agreement with the reference filters (when the
        reference file lists the run's questions), fallbacks to unfiltered search."""
        questions = [q for q in run.questions if q.id in records]
        extractions = {qid: r.extraction for qid, r in records.items()}
        reference = None
        if default_reference_path().is_file():
            lookup = build_extractor("reference", run.driver, run.database, run.corpus)
            listed = {q.id: lookup.extract(q.query) for q in questions}
            # another corpus's questions are not in the benchmark's file: no reference then
            reference = {qid: e for qid, e in listed.items() if e.failure is None} or None
        report = summarise_quality(questions, extractions, reference)
        extractor = next((r.extractor for r in records.values()), None)
        report["extractor"] = extractor
        report["upper_bound"] = extractor == "gold"
        report["reference"] = str(default_reference_path()) if reference is not None else None
        report["fallbacks"] = sum(r.fallback for r in records.values())
        if run.llm is not None:   # which model read the filters, at what cost
            report.update(llm=run.llm.label, llm_usage=run.llm.usage.as_dict())
        return report

    @classmethod
    def report_section(cls, filters: Mapping[str, Any]) -> list[str]:
        groups = filters["groups"]
        label = filters["extractor"] + (" (upper bound: the evidence's own sources and dates)"
                                        if filters.get("upper_bound") else "")
        if filters.get("llm"):
            usage = filters.get("llm_usage") or {}
            label += (f", model {filters['llm']}: {usage.get('calls', 0)} calls, {usage.get('prompt_tokens', 0)} "
                      f"prompt and {usage.get('completion_tokens', 0)} completion tokens, "
                      f"{usage.get('cache_hits', 0)} replies from the cache")
        lines = ["## Metadata filters", "",
                 f"Extractor **{label}**. Of {filters['questions']} questions, {filters['filtered']} were searched "
                 f"with a filter and {filters['fallbacks']} without (no usable filter: unfiltered search); "
                 f"{filters['filtered_null']} of {filters['null']} null questions got a filter; "
                 f"{filters['failures']} extraction failures.", ""]
        if not filters["filtered"]:
            # every search ran unfiltered: recall against the evidence would read 1.000 and mean nothing
            lines += ["No question got a filter (the corpus has no source or date metadata, or no question "
                      "names one), so no filter applied and there is no filter quality to report.", ""]
        else:
            columns = [k for k in COLUMNS if any(g.get(k) is not None for g in groups.values())]
            rows = [[name, str(g["n"]), *(fmt(g[k]) if g.get(k) is not None else "-" for k in columns)]
                    for name, g in groups.items()]
            lines += [*table(["group", "n", *(COLUMNS[k] for k in columns)], rows), ""]
        dropped = ", ".join(f"{name} ({n})" for name, n in filters["dropped_names"].items())
        return [*lines, *([f"Names dropped (no Source in the graph): {dropped}.", ""] if dropped else []),
                *([f"Reference filters: {filters['reference']}.", ""] if filters.get("reference") else [])]

    @classmethod
    def write_traces(cls, records: Mapping[str, "FilterExtraction"], run: RunContext) -> None:
        rows = []
        for qid, r in records.items():
            found = r.filter
            rows.append({"question": qid, "filter": json.dumps(found.to_json()), "sources": list(found.sources) or None,
                         "days": list(found.days) or None, "from": found.day_from, "to": found.day_to,
                         "fallback": r.fallback})
        extractor = next((r.extractor for r in records.values()), None)
        for i in range(0, len(rows), 500):
            run.driver.execute_query(cypher.load("eval/write_filters"), run=run.run_id, filters=rows[i:i + 500],
                                     extractor=extractor, database_=run.database)

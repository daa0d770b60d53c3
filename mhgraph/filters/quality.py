"""How good an extractor's filters are, measured against each question's own evidence.

Per question with evidence (null questions have none, so they count only in `filtered_null`):
- source precision: share of the filter's sources that published some of the evidence (a filter
  without sources is not counted); source recall: share of the evidence's sources in the filter
  (a filter without sources admits them all: recall 1);
- date precision: share of the filter's days on which some evidence was published (day lists
  only); date recall: share of the evidence's days the date condition admits;
- evidence admitted: share of the evidence items (source and day together) the whole filter
  admits: what the filtered search can still find;
- agreement with the reference filters (the original's GPT-3.5 filters): same set of sources,
  and same date condition.
Everything is given overall and per question type.
"""

from __future__ import annotations

from datetime import timezone
from statistics import fmean
from typing import Any, Mapping, Sequence

from mhgraph.filters.extractors import Extraction
from mhgraph.filters.model import MetadataFilter


def _mean(values: Sequence[float]) -> float | None:
    return round(fmean(values), 4) if values else None


def question_quality(evidence: Sequence[Any], found: MetadataFilter,
                     reference: MetadataFilter | None) -> dict[str, float | None]:
    gold_sources = {e.source for e in evidence if e.source}
    gold_days = {e.published_at.astimezone(timezone.utc).date() for e in evidence if e.published_at}
    row: dict[str, float | None] = {
        "source_precision": (len(set(found.sources) & gold_sources) / len(found.sources)) if found.sources else None,
        "source_recall": (len(set(found.sources) & gold_sources) / len(gold_sources) if found.sources else 1.0)
        if gold_sources else None,
        "date_precision": (len(set(found.days) & gold_days) / len(found.days)) if found.days else None,
        "date_recall": (sum(found.admits_day(d) for d in gold_days) / len(gold_days)) if gold_days else None,
        "evidence_admitted": sum(found.admits(e.source, e.published_at) for e in evidence) / len(evidence),
        "has_sources": float(bool(found.sources)),
        "has_dates": float(found.has_dates),
    }
    if reference is not None:
        row["agrees_sources"] = float(set(found.sources) == set(reference.sources))
        row["agrees_dates"] = float(found.day_ranges() == reference.day_ranges())
    return row


def summarise_quality(questions: Sequence[Any], extractions: Mapping[str, Extraction],
                      reference: Mapping[str, Extraction] | None = None) -> dict[str, Any]:
    """Filter quality of one run: overall and per type, with fallbacks, drops and failures."""
    rows: dict[str, list[dict[str, float | None]]] = {}
    counts = {"questions": 0, "filtered": 0, "unfiltered": 0, "filtered_null": 0, "null": 0,
              "with_dropped_names": 0, "failures": 0}
    dropped: dict[str, int] = {}
    for q in questions:
        extraction = extractions[q.id]
        counts["questions"] += 1
        counts["filtered" if not extraction.filter.is_empty else "unfiltered"] += 1
        counts["failures"] += extraction.failure is not None
        if extraction.dropped:
            counts["with_dropped_names"] += 1
            for name in extraction.dropped:
                dropped[name] = dropped.get(name, 0) + 1
        if not q.evidence:
            counts["null"] += 1
            counts["filtered_null"] += not extraction.filter.is_empty
            continue
        ref = reference[q.id].filter if reference is not None and q.id in reference else None
        row = question_quality(q.evidence, extraction.filter, ref)
        rows.setdefault("all", []).append(row)
        rows.setdefault(q.question_type, []).append(row)
    groups = {name: {"n": len(group), **{key: _mean([r[key] for r in group if r.get(key) is not None])
                                         for key in group[0]}}
              for name, group in rows.items()}
    return {**counts, "dropped_names": dict(sorted(dropped.items(), key=lambda kv: -kv[1])[:20]),
            "groups": groups}

"""A metadata filter as data: which sources, and which publication days, a chunk must have.

JSON form (what extractors return, reports record and `--filter` files hold):

    {"source": ["TechCrunch", "The Verge"],
     "published_at": ["2023-10-07", "2023-10-30"]}          # these days, or
     "published_at": {"gte": "2023-10-01", "lte": "2023-10-31"}   # a range of days (either end open)

Both keys are optional; together they must both hold (AND), as in the original Multi-Meta-RAG.
Days are UTC calendar days of a chunk's `published_at`. Source names here are *resolved* names:
exactly a Source node's `name` (filters/sources.py maps what a question or a model wrote to them).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone
from typing import Any, Mapping

from mhgraph.errors import MhgraphError

UTC = timezone.utc


class FilterError(MhgraphError):
    """A filter that is not of the documented form; the message names the field."""


@dataclass(frozen=True)
class MetadataFilter:
    sources: tuple[str, ...] = ()       # empty: any source
    days: tuple[date, ...] = ()          # published on one of these days; empty: see the range
    day_from: date | None = None         # published on or after this day
    day_to: date | None = None           # published on or before this day

    def __post_init__(self) -> None:
        if self.days and (self.day_from or self.day_to):
            raise FilterError("filter field 'published_at': give days or a range, not both")
        if self.day_from and self.day_to and self.day_from > self.day_to:
            raise FilterError(f"filter field 'published_at': gte {self.day_from} is after lte {self.day_to}")
        object.__setattr__(self, "sources", tuple(dict.fromkeys(self.sources)))
        object.__setattr__(self, "days", tuple(sorted(set(self.days))))

    @property
    def has_dates(self) -> bool:
        return bool(self.days or self.day_from or self.day_to)

    @property
    def is_empty(self) -> bool:
        return not self.sources and not self.has_dates

    def day_ranges(self) -> list[tuple[datetime, datetime]]:
        """The date condition as half-open UTC [start, end) intervals: one per day, or the range
        (an open end becomes the far past or future); [] for no date condition."""
        if self.days:
            return [(_start(d), _start(d + timedelta(days=1))) for d in self.days]
        if self.day_from or self.day_to:
            start = _start(self.day_from) if self.day_from else datetime(1, 1, 1, tzinfo=UTC)
            end = _start(self.day_to + timedelta(days=1)) if self.day_to else datetime(9999, 12, 31, tzinfo=UTC)
            return [(start, end)]
        return []

    def admits(self, source: str | None, published_at: datetime | None) -> bool:
        """Whether a chunk with this source and publication time passes the filter."""
        if self.sources and source not in self.sources:
            return False
        if self.has_dates:
            if published_at is None:
                return False
            moment = published_at if published_at.tzinfo else published_at.replace(tzinfo=UTC)
            return any(start <= moment < end for start, end in self.day_ranges())
        return True

    def admits_day(self, day: date) -> bool:
        """Whether the date condition alone lets a chunk of that day pass."""
        return self.without_sources().admits(None, _start(day))

    def without_sources(self) -> "MetadataFilter":
        return MetadataFilter((), self.days, self.day_from, self.day_to)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.sources:
            out["source"] = list(self.sources)
        if self.days:
            out["published_at"] = [d.isoformat() for d in self.days]
        elif self.day_from or self.day_to:
            out["published_at"] = {k: v.isoformat() for k, v in (("gte", self.day_from), ("lte", self.day_to)) if v}
        return out

    @classmethod
    def from_json(cls, data: Any, where: str = "filter") -> "MetadataFilter":
        """Validate the JSON form; a bad value raises FilterError naming `where` and the field."""
        if not isinstance(data, Mapping):
            raise FilterError(f"{where}: expected an object with 'source' and/or 'published_at', "
                              f"got {type(data).__name__}")
        unknown = sorted(set(data) - {"source", "published_at"})
        if unknown:
            raise FilterError(f"{where}: unknown field '{unknown[0]}' (known: source, published_at)")
        sources = data.get("source") or []
        if isinstance(sources, str):
            sources = [sources]
        if not isinstance(sources, list) or not all(isinstance(s, str) and s.strip() for s in sources):
            raise FilterError(f"{where}.source: expected a list of non-empty names, got {sources!r}")
        dates = data.get("published_at")
        days: list[date] = []
        day_from = day_to = None
        if isinstance(dates, list):
            days = [parse_day(d, f"{where}.published_at[{i}]") for i, d in enumerate(dates)]
        elif isinstance(dates, Mapping):
            bad = sorted(set(dates) - {"gte", "lte"})
            if bad:
                raise FilterError(f"{where}.published_at: unknown bound '{bad[0]}' (known: gte, lte)")
            day_from = parse_day(dates["gte"], f"{where}.published_at.gte") if dates.get("gte") else None
            day_to = parse_day(dates["lte"], f"{where}.published_at.lte") if dates.get("lte") else None
        elif dates not in (None, "", []):
            raise FilterError(f"{where}.published_at: expected a list of days or {{gte, lte}}, got {dates!r}")
        try:
            return cls(tuple(s.strip() for s in sources), tuple(days), day_from, day_to)
        except FilterError as exc:
            raise FilterError(f"{where}: {exc}") from None


def parse_day(value: Any, where: str) -> date:
    """'2023-10-07' (or a full ISO timestamp, whose UTC day counts) -> date."""
    if isinstance(value, date) and not isinstance(value, datetime):
        return value
    if isinstance(value, str):
        text = value.strip()
        try:
            return date.fromisoformat(text[:10]) if len(text) == 10 else _utc_day(datetime.fromisoformat(text))
        except ValueError:
            pass
    raise FilterError(f"{where}: expected a day as YYYY-MM-DD, got {value!r}")


def _utc_day(moment: datetime) -> date:
    return (moment if moment.tzinfo is None else moment.astimezone(UTC)).date()


def _start(day: date) -> datetime:
    return datetime.combine(day, time(0), tzinfo=UTC)

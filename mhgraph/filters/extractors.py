"""Filter extractors: question text -> MetadataFilter, each behind `FilterExtractor.extract`.

- `rules`: sources named in the question, matched against the graph's own Source names and their
  variants (filters/sources.py), and date expressions (filters/dates.py). Offline, the default.
- `llm`: the original method: a few-shot prompt through the LLM layer, JSON out, validated; names
  resolved against the graph. A failed call gives no filter (counted), never a failed run.
- `reference`: the original Multi-Meta-RAG's own GPT-3.5 filters, looked up by question text.
- `gold`: the sources and days of the question's own evidence: an upper bound, not a method.

Every extractor resolves names against the graph: a name that no Source has is dropped and
reported, never passed on.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from datetime import date, timezone
from pathlib import Path
from typing import Any, Iterable, Protocol, Sequence

import neo4j
from dateutil import parser as dateparser
from pydantic import BaseModel, Field

from mhgraph import cypher
from mhgraph.benchmark import default_questions_path
from mhgraph.errors import InputError, MhgraphError
from mhgraph.filters.dates import date_condition
from mhgraph.filters.model import FilterError, MetadataFilter, parse_day
from mhgraph.filters.sources import SourceCatalog

EXTRACTORS = ("rules", "llm", "reference", "gold")
UPPER_BOUND = "gold"     # labelled as an upper bound wherever it is reported
REFERENCE_FILTERS_ENV = "MHGRAPH_REFERENCE_FILTERS"


@dataclass(frozen=True)
class Extraction:
    """What an extractor made of one question."""

    filter: MetadataFilter
    dropped: tuple[str, ...] = ()    # names that matched no Source of the graph
    seconds: float = 0.0
    failure: str | None = None       # why no filter could be read (an LLM failure, a question not listed)

    def to_json(self) -> dict[str, Any]:
        return {"filter": self.filter.to_json(), "dropped": list(self.dropped), "seconds": round(self.seconds, 4),
                **({"failure": self.failure} if self.failure else {})}


class FilterExtractor(Protocol):
    name: str

    def extract(self, question: str) -> Extraction: ...


def corpus_span(driver: neo4j.Driver, database: str | None, corpus: str) -> tuple[date, date] | None:
    """The first and last publication day of the corpus (years for dates written without one)."""
    records, _, _ = driver.execute_query(cypher.load("filters/date_span"), corpus=corpus, database_=database,
                                         routing_=neo4j.RoutingControl.READ)
    first, last = records[0]["first"], records[0]["last"]
    if first is None:
        return None
    return first.to_native().date(), last.to_native().date()


@dataclass
class RulesExtractor:
    catalog: SourceCatalog
    span: tuple[date, date] | None
    name: str = "rules"

    def extract(self, question: str) -> Extraction:
        started = time.perf_counter()
        when = date_condition(question, self.span)
        found = MetadataFilter(tuple(self.catalog.find(question)), when.days, when.day_from, when.day_to)
        return Extraction(found, seconds=time.perf_counter() - started)


class LLMFilter(BaseModel):
    """What the model is asked for (the original method's filter, with ranges allowed)."""

    source: list[str] = Field(default_factory=list, description="news outlets the question names")
    published_on: list[str] = Field(default_factory=list,
                                     description="days (YYYY-MM-DD) on which a named article was published")
    published_after: str | None = Field(None, description="YYYY-MM-DD, if the question asks for articles from then on")
    published_before: str | None = Field(None, description="YYYY-MM-DD, if the question asks for articles up to then")


# Few-shot examples written for mhgraph (no benchmark question among them), in the original's style.
LLM_EXAMPLES: tuple[tuple[str, LLMFilter], ...] = (
    ("Did the Daily Planet report on the merger before Metro Herald's article of March 3, 2021 covered the ruling?",
     LLMFilter(source=["Daily Planet", "Metro Herald"], published_on=["2021-03-03"])),
    ("Which company, according to Gotham Gazette and the Star's coverage in May 2022, recalled its scooters?",
     LLMFilter(source=["Gotham Gazette", "The Star"], published_after="2022-05-01", published_before="2022-05-31")),
    ("What is the name of the river that floods every spring near the old mill?", LLMFilter()),
)
LLM_SYSTEM = ("You extract metadata filters for searching a news archive. From the question, list the news "
              "outlets it names (as written, without possessives) and the publication dates it states. Reply "
              "with one JSON object with keys source, published_on, published_after, published_before; leave a "
              "key empty or null when the question does not state it. Never guess an outlet or a date.")


@dataclass
class LLMExtractor:
    llm: Any                       # mhgraph.llm.LLM
    catalog: SourceCatalog
    span: tuple[date, date] | None
    name: str = "llm"

    def messages(self, question: str) -> list[dict[str, str]]:
        span = f" Articles date from {self.span[0]} to {self.span[1]}." if self.span else ""
        out = [{"role": "system", "content": LLM_SYSTEM + span}]
        for example, answer in LLM_EXAMPLES:
            out += [{"role": "user", "content": example},
                    {"role": "assistant", "content": answer.model_dump_json()}]
        return out + [{"role": "user", "content": question}]

    def extract(self, question: str) -> Extraction:
        from mhgraph.llm import LLMError

        started = time.perf_counter()
        try:
            reply = self.llm.json(self.messages(question), LLMFilter, max_tokens=200)
        except LLMError as exc:
            return Extraction(MetadataFilter(), seconds=time.perf_counter() - started, failure=str(exc))
        sources, dropped = self.catalog.resolve(reply.source)
        days, bad = _days(reply.published_on)
        bounds = {}
        for key, value in (("day_from", reply.published_after), ("day_to", reply.published_before)):
            parsed, wrong = _days([value] if value else [])
            bounds[key] = parsed[0] if parsed else None
            bad += wrong
        try:
            found = MetadataFilter(tuple(sources), tuple(days) if not any(bounds.values()) else (), **bounds)
        except FilterError:  # an impossible range: keep the sources alone
            found = MetadataFilter(tuple(sources))
        return Extraction(found, tuple(dropped + bad), time.perf_counter() - started)


def _days(values: Iterable[str]) -> tuple[list[date], list[str]]:
    """Valid days, and the values that were not days (reported as dropped)."""
    days, bad = [], []
    for value in values:
        try:
            days.append(parse_day(value, "published_on"))
        except FilterError:
            bad.append(str(value))
    return days, bad


@dataclass
class LookupExtractor:
    """Filters known in advance for each question text (the reference file, the gold evidence)."""

    name: str
    table: dict[str, Extraction]

    def extract(self, question: str) -> Extraction:
        started = time.perf_counter()
        found = self.table.get(" ".join(question.split()))
        if found is None:
            return Extraction(MetadataFilter(), failure=f"no {self.name} filter for this question",
                              seconds=time.perf_counter() - started)
        return Extraction(found.filter, found.dropped, time.perf_counter() - started)


def reference_extractor(path: Path, catalog: SourceCatalog) -> LookupExtractor:
    """The original Multi-Meta-RAG filters (`[{query, filter: {source: {$in}, published_at: {$in}}}]`,
    dates written "October 7, 2023"), resolved against the graph; names no Source has and the
    operators other than $in are reported as dropped."""
    try:
        records = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MhgraphError(f"{path}: reference filters not found (set {REFERENCE_FILTERS_ENV} or "
                           "put them in ../shared/data/multi-meta-rag/)") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(path, "", f"not JSON: {exc}") from None
    if not isinstance(records, list):
        raise InputError(path, "", "expected a list of {query, filter} records")
    table: dict[str, Extraction] = {}
    for i, record in enumerate(records, start=1):
        where = f"record {i}"
        if not isinstance(record, dict) or not isinstance(record.get("query"), str) \
                or not isinstance(record.get("filter"), dict):
            raise InputError(path, "", f"{where}: expected {{query, filter}}")
        spec = record["filter"]
        unsupported = [f"{key} {op}" for key, cond in spec.items() if isinstance(cond, dict)
                       for op in cond if op != "$in"]
        names = _in_list(spec.get("source"), path, f"{where}.filter.source")
        days = []
        for j, text in enumerate(_in_list(spec.get("published_at"), path, f"{where}.filter.published_at")):
            try:
                days.append(dateparser.parse(text).date())
            except (ValueError, OverflowError):
                raise InputError(path, "", f"{where}.filter.published_at[{j}]: not a date: {text!r}") from None
        sources, dropped = catalog.resolve(names)
        table[" ".join(record["query"].split())] = Extraction(MetadataFilter(tuple(sources), tuple(days)),
                                                              tuple(dropped + unsupported))
    return LookupExtractor("reference", table)


def _in_list(spec: Any, path: Path, where: str) -> list[str]:
    """The values of {"$in": [...]}. The file also holds a few exclusions ($nin, $ne: 9 of 2,556
    records), which MetadataFilter does not express: they are dropped (reported) and that field
    left unfiltered, which is nearly what excluding one outlet of 49 does."""
    if spec is None:
        return []
    if isinstance(spec, dict) and "$in" not in spec and set(spec) <= {"$nin", "$ne"}:
        return []
    values = spec.get("$in") if isinstance(spec, dict) else None
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise InputError(path, "", f"{where}: expected {{\"$in\": [strings]}}")
    return values


def gold_extractor(questions: Sequence[Any]) -> LookupExtractor:
    """Each question's evidence sources and publication days (UTC): an upper bound."""
    table = {}
    for q in questions:
        if q.evidence:
            sources = tuple(e.source for e in q.evidence if e.source)
            days = tuple(e.published_at.astimezone(timezone.utc).date() for e in q.evidence if e.published_at)
            table[" ".join(q.query.split())] = Extraction(MetadataFilter(sources, days))
    return LookupExtractor(UPPER_BOUND, table)


def default_reference_path() -> Path:
    """$MHGRAPH_REFERENCE_FILTERS, else query_metadata_filters.json in multi-meta-rag/ beside the
    benchmark folder."""
    if env := os.environ.get(REFERENCE_FILTERS_ENV):
        return Path(env)
    return default_questions_path().parent.parent / "multi-meta-rag" / "query_metadata_filters.json"


def build_extractor(name: str, driver: neo4j.Driver, database: str | None, corpus: str, *,
                    llm: Any = None, questions: Sequence[Any] | None = None,
                    reference_path: Path | None = None) -> FilterExtractor:
    if name not in EXTRACTORS:
        raise MhgraphError(f"unknown filter extractor '{name}' (available: {', '.join(EXTRACTORS)})")
    if name == "gold":
        if questions is None:
            raise MhgraphError("the gold filter extractor needs the benchmark questions (it is for 'mhgraph eval')")
        return gold_extractor(questions)
    catalog = SourceCatalog.from_graph(driver, database, corpus)
    if name == "reference":
        return reference_extractor(reference_path or default_reference_path(), catalog)
    span = corpus_span(driver, database, corpus)
    if name == "llm":
        if llm is None:
            raise MhgraphError("the llm filter extractor needs a language model: set llm_backend (openai or local)")
        return LLMExtractor(llm, catalog, span)
    return RulesExtractor(catalog, span)

"""Metadata filters: the data form and its validation, source names resolved against the graph's
own Source nodes, date expressions, each extractor, and filter quality against the evidence."""

from __future__ import annotations

import json
from datetime import date, datetime, timezone

import pytest

from mhgraph.errors import InputError, MhgraphError
from mhgraph.filters.dates import date_condition
from mhgraph.filters.extractors import (
    Extraction,
    LLMExtractor,
    RulesExtractor,
    build_extractor,
    gold_extractor,
    reference_extractor,
)
from mhgraph.filters.model import FilterError, MetadataFilter
from mhgraph.filters.quality import summarise_quality
from mhgraph.filters.sources import SourceCatalog
from mhgraph.ingest.pipeline import ingest_corpus
from tests.conftest import REPO, SAMPLE, wipe

SHARED = REPO.parent / "shared" / "data"
# Names as MultiHop-RAG's corpus has them (the catalog is built from whatever names it is given)
NEWS = SourceCatalog(("TechCrunch", "The Verge", "Fortune", "The Age", "Cnbc | World Business News Leader",
                      "FOX News - Health", "FOX News - Lifestyle", "BBC News - Technology",
                      "BBC News - Entertainment & Arts", "The Independent - Life and Style",
                      "The Independent - Sports", "Live Science: The Most Interesting Articles", "CBSSports.com",
                      "The Roar | Sports Writers Blog", "Sporting News"))
SPAN = (date(2023, 9, 26), date(2023, 12, 25))


# -- the data form ----------------------------------------------------------------------------------
def test_filter_json_round_trip_and_semantics() -> None:
    days = MetadataFilter.from_json({"source": ["TechCrunch"], "published_at": ["2023-10-07", "2023-10-30"]})
    assert days.sources == ("TechCrunch",) and days.days == (date(2023, 10, 7), date(2023, 10, 30))
    assert MetadataFilter.from_json(days.to_json()) == days
    utc = timezone.utc
    assert days.admits("TechCrunch", datetime(2023, 10, 7, 23, 59, tzinfo=utc))
    assert not days.admits("TechCrunch", datetime(2023, 10, 8, 0, 0, tzinfo=utc))   # the next UTC day
    assert not days.admits("The Verge", datetime(2023, 10, 7, 12, tzinfo=utc))       # AND, not OR
    span = MetadataFilter.from_json({"published_at": {"gte": "2023-10-01", "lte": "2023-10-31"}})
    assert span.admits("anyone", datetime(2023, 10, 31, 22, tzinfo=utc)) and not span.admits("x", datetime(2023, 11, 1, tzinfo=utc))
    assert span.day_ranges() == [(datetime(2023, 10, 1, tzinfo=utc), datetime(2023, 11, 1, tzinfo=utc))]
    open_end = MetadataFilter(day_to=date(2023, 10, 5))
    assert open_end.admits(None, datetime(2020, 1, 1, tzinfo=utc)) and not open_end.admits(None, None)
    assert MetadataFilter.from_json({}).is_empty and MetadataFilter.from_json({"source": []}).is_empty


@pytest.mark.parametrize("data, message", [
    ([], "filter: expected an object with 'source' and/or 'published_at', got list"),
    ({"sources": ["x"]}, "filter: unknown field 'sources' (known: source, published_at)"),
    ({"source": [1]}, "filter.source: expected a list of non-empty names, got [1]"),
    ({"source": ["ok", " "]}, "filter.source: expected a list of non-empty names, got ['ok', ' ']"),
    ({"published_at": ["2023-13-01"]}, "filter.published_at[0]: expected a day as YYYY-MM-DD, got '2023-13-01'"),
    ({"published_at": {"after": "2023-10-01"}}, "filter.published_at: unknown bound 'after' (known: gte, lte)"),
    ({"published_at": {"gte": "2023-11-01", "lte": "2023-10-01"}},
     "filter: filter field 'published_at': gte 2023-11-01 is after lte 2023-10-01"),
    ({"published_at": 5}, "filter.published_at: expected a list of days or {gte, lte}, got 5"),
])
def test_filter_validation_names_the_field(data, message) -> None:
    with pytest.raises(FilterError) as caught:
        MetadataFilter.from_json(data)
    assert str(caught.value) == message


# -- source names -----------------------------------------------------------------------------------
@pytest.mark.parametrize("question, expected", [
    ("Did the verge's piece agree with The Verge?", ["The Verge"]),                  # needs a capital
    ("What did TechCrunch's article and the Verge say?", ["TechCrunch", "The Verge"]),
    ("Is the company on the verge of collapse?", []),
    ("according to 'Fortune' and the Cnbc | World Business News Leader report", ["Fortune", "Cnbc | World Business News Leader"]),
    ("as CNBC reported", ["Cnbc | World Business News Leader"]),
    ("Does the 'FOX News - Health' article agree with The Age?", ["FOX News - Health", "The Age"]),
    ("What did FOX News say about the age of the fox?", ["FOX News - Health", "FOX News - Lifestyle"]),
    ("a BBC article", ["BBC News - Entertainment & Arts", "BBC News - Technology"]),
    ("The Independent - Life and Style and The Independent", ["The Independent - Life and Style",
                                                              "The Independent - Sports"]),
    ("from Live Science and CBSSports.com", ["Live Science: The Most Interesting Articles", "CBSSports.com"]),
    ("The Roar | Sports Writers Blog, then Sporting News", ["The Roar | Sports Writers Blog", "Sporting News"]),
    ("What is the capital of France?", []),
])
def test_sources_found_in_questions(question, expected) -> None:
    assert NEWS.find(question) == expected


def test_names_resolve_or_are_dropped_injection_included() -> None:
    resolved, dropped = NEWS.resolve(["the verge", "TechCrunch's article", "CNN", "Bloomberg",
                                      "x' OR 1=1 //", "TechCrunch\"}) MATCH (n) DETACH DELETE n //"])
    assert resolved == ["The Verge", "TechCrunch"]
    assert dropped == ["CNN", "Bloomberg", "x' OR 1=1 //"]   # the last names TechCrunch: resolved to it, nothing else


# -- dates ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("question, days, start, end", [
    ("the TechCrunch report on October 7, 2023, and the article on October 30, 2023", [(10, 7), (10, 30)], None, None),
    ("reported by TechCrunch on Oct. 7th", [(10, 7)], None, None),
    ("the article of 5 December 2023", [(12, 5)], None, None),
    ("published in October 2023", [], (10, 1), (10, 31)),
    ("before the article of December 5", [], None, (12, 5)),
    ("after the report on October 7, and the one on October 30", [], (10, 7), (10, 30)),
    ("the reports published between September 28, 2023, and December 18, 2023", [], (9, 28), (12, 18)),
    ("the report on 2023-11-13", [(11, 13)], None, None),
    ("published at 13:41:30 by The Age", [], None, None),
    ("Do they agree that the robot began shipping on October 16?", [], None, None),   # an event's day
    ("What was the score of the January 6 cup tie, as Courtside Daily wrote?", [], None, None),
])
def test_date_expressions(question, days, start, end) -> None:
    when = date_condition(question, SPAN)
    assert when.days == tuple(date(2023, m, d) for m, d in days)
    assert when.day_from == (date(2023, *start) if start else None)
    assert when.day_to == (date(2023, *end) if end else None)


def test_a_day_without_a_year_takes_the_corpus_year() -> None:
    assert date_condition("the article on March 3", (date(2021, 1, 1), date(2021, 12, 31))).days == (date(2021, 3, 3),)


def test_rules_extractor_combines_sources_and_dates() -> None:
    found = RulesExtractor(NEWS, SPAN).extract("Did The Verge report it before TechCrunch's story of November 6, 2023?")
    assert found.filter.to_json() == {"source": ["The Verge", "TechCrunch"], "published_at": {"lte": "2023-11-06"}}
    assert RulesExtractor(NEWS, SPAN).extract("Which river floods in spring?").filter.is_empty


def test_the_words_naming_a_filter_are_left_out_of_the_question() -> None:
    from mhgraph.filters.words import FilterWords

    words = FilterWords(NEWS, SPAN)
    question = "Did The Verge report the recall before TechCrunch's story of November 6, 2023?"
    found = RulesExtractor(NEWS, SPAN).extract(question).filter
    assert words.left_out(question, found) == "Did report the recall before story of ?"
    # a filter read elsewhere (a model, a reference file): only what it holds is left out; a date
    # it does not admit dates something else
    later = ("Did The Verge report the recall before TechCrunch's story of November 6, 2023, or after the December 18 "
             "hearing?")
    assert words.left_out(later, MetadataFilter(("TechCrunch",), day_to=date(2023, 11, 6))) == (
        "Did The Verge report the recall before story of , or after the December 18 hearing?")
    assert words.left_out(question, MetadataFilter()) == question
    # a date inside a source's name leaves with it (spans that overlap leave as one)
    dated = FilterWords(SourceCatalog(("October 2023 Review",)), SPAN)
    month = MetadataFilter(("October 2023 Review",), day_from=date(2023, 10, 1), day_to=date(2023, 10, 31))
    assert dated.left_out("Did the October 2023 Review say so?", month) == "Did the say so?"
    # a question that is all metadata keeps its words: a search needs a query
    assert words.left_out("TechCrunch, October 7", MetadataFilter(("TechCrunch",), days=(date(2023, 10, 7),))) == \
        "TechCrunch, October 7"


# -- against the graph ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def sample_graph(driver, settings, server, embedder):
    wipe(driver, settings.neo4j_database)
    ingest_corpus(SAMPLE / "corpus.json", settings, driver, embedder=embedder, progress=False)
    return driver


def test_catalog_and_rules_come_from_the_graph(sample_graph, settings) -> None:
    catalog = SourceCatalog.from_graph(sample_graph, settings.neo4j_database, "sample")
    stored = json.loads((SAMPLE / "corpus.json").read_text())
    assert set(catalog.names) == {a["source"] for a in stored}
    assert catalog.find("What did the Meridian Post and Harbor Ledger's report say?") == ["The Meridian Post",
                                                                                          "Harbor Ledger"]
    extractor = build_extractor("rules", sample_graph, settings.neo4j_database, "sample")
    assert extractor.span == (date(2023, 9, 27), date(2023, 12, 17))   # the sample's first and last day
    assert extractor.extract("Did Circuit Weekly report it on 12 December?").filter.to_json() == {
        "source": ["Circuit Weekly"], "published_at": ["2023-12-12"]}
    with pytest.raises(MhgraphError, match="unknown filter extractor 'magic'"):
        build_extractor("magic", sample_graph, settings.neo4j_database, "sample")
    with pytest.raises(MhgraphError, match="needs the benchmark questions"):
        build_extractor("gold", sample_graph, settings.neo4j_database, "sample")


def test_reference_filters_resolve_against_the_graph(sample_graph, settings, tmp_path) -> None:
    path = tmp_path / "filters.json"
    path.write_text(json.dumps([
        {"query": "Q one?", "filter": {"source": {"$in": ["Circuit Weekly", "CNN"]},
                                       "published_at": {"$in": ["October 3, 2023"]}}},
        {"query": "Q  two?", "filter": {"source": {"$nin": ["Circuit Weekly"]}}},
    ]))
    extractor = build_extractor("reference", sample_graph, settings.neo4j_database, "sample", reference_path=path)
    one = extractor.extract("Q one?")
    assert one.filter.to_json() == {"source": ["Circuit Weekly"], "published_at": ["2023-10-03"]}
    assert one.dropped == ("CNN",)
    two = extractor.extract("Q two?")            # whitespace-insensitive lookup; $nin not expressible
    assert two.filter.is_empty and two.dropped == ("source $nin",)
    assert extractor.extract("not listed").failure == "no reference filter for this question"
    path.write_text(json.dumps([{"query": "Q", "filter": {"published_at": {"$in": ["someday"]}}}]))
    with pytest.raises(InputError, match=r"filters.json: record 1.filter.published_at\[0\]: not a date: 'someday'"):
        build_extractor("reference", sample_graph, settings.neo4j_database, "sample", reference_path=path)
    with pytest.raises(MhgraphError, match="reference filters not found"):
        build_extractor("reference", sample_graph, settings.neo4j_database, "sample", reference_path=tmp_path / "no")


@pytest.mark.skipif(not (SHARED / "multi-meta-rag" / "query_metadata_filters.json").is_file(),
                    reason="the reference filters are not beside the checkout")
def test_reference_file_matches_the_shared_benchmark_questions() -> None:
    """Every development question has its reference filter, and it resolves to corpus sources."""
    corpus = json.loads((SHARED / "multihop-rag" / "corpus.json").read_text())
    catalog = SourceCatalog(tuple(sorted({a["source"] for a in corpus})))
    extractor = reference_extractor(SHARED / "multi-meta-rag" / "query_metadata_filters.json", catalog)
    questions = json.loads((SHARED / "multihop-rag" / "MultiHopRAG.json").read_text())
    found = [extractor.extract(q["query"]) for q in questions]
    assert all(e.failure is None for e in found)
    assert sum(not e.filter.is_empty for e in found) / len(found) > 0.95
    first = found[0].filter
    assert first.sources == ("The Verge", "TechCrunch")     # the file's first record, as published


class ScriptedLLM:
    """Stands in for mhgraph.llm.LLM in this unit test only: returns a fixed reply object."""

    label = "scripted"

    def __init__(self, reply) -> None:
        self.reply, self.seen = reply, []

    def json(self, messages, schema, **params):
        self.seen.append(messages)
        return schema.model_validate(self.reply)


def test_llm_extractor_validates_and_resolves_the_reply() -> None:
    llm = ScriptedLLM({"source": ["the verge", "Reuters"], "published_on": ["2023-10-07", "yesterday"]})
    found = LLMExtractor(llm, NEWS, SPAN).extract("Did the Verge ...?")
    assert found.filter.to_json() == {"source": ["The Verge"], "published_at": ["2023-10-07"]}
    assert found.dropped == ("Reuters", "yesterday")
    messages = llm.seen[0]
    assert messages[0]["role"] == "system" and "2023-09-26" in messages[0]["content"]
    assert messages[-1] == {"role": "user", "content": "Did the Verge ...?"} and len(messages) == 8
    ranged = LLMExtractor(ScriptedLLM({"published_after": "2023-11-01", "published_before": "2023-10-01"}),
                          NEWS, SPAN).extract("?")
    assert ranged.filter.is_empty  # an impossible range is dropped, never sent


def test_gold_extractor_and_quality() -> None:
    from mhgraph.benchmark import load_questions

    questions = load_questions(SAMPLE / "questions.json")
    gold = gold_extractor(questions)
    with_evidence = [q for q in questions if q.evidence]
    extractions = {q.id: gold.extract(q.query) for q in questions}
    report = summarise_quality(questions, extractions)
    assert report["groups"]["all"]["evidence_admitted"] == 1.0      # an upper bound admits all evidence
    assert report["groups"]["all"]["source_precision"] == 1.0 and report["groups"]["all"]["date_recall"] == 1.0
    assert report["groups"]["all"]["n"] == len(with_evidence)
    # a filter on the wrong source admits nothing of the evidence
    wrong = {q.id: Extraction(MetadataFilter(("Nobody",))) for q in questions}
    assert summarise_quality(questions, wrong)["groups"]["all"]["evidence_admitted"] == 0.0
    assert summarise_quality(questions, wrong)["groups"]["all"]["source_recall"] == 0.0

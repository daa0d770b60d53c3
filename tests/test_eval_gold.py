"""Gold matching: normalisation, facts inside one chunk, facts across two overlapping chunks, coverage."""

from __future__ import annotations

from pathlib import Path

import pytest

import mhgraph
from mhgraph.errors import MhgraphError
from mhgraph.eval.gold import (
    ChunkRef, DocumentRef, GoldMatcher, contains_fact, coverage_report, gold_chunk_ids, normalise,
    normalise_with_offsets,
)
from mhgraph.types import Evidence, Question
from mhgraph.benchmark import load_questions
from mhgraph.ingest.corpus import read_corpus

SAMPLE = Path(mhgraph.__file__).parent / "data" / "sample"
WINDOW, OVERLAP = 60, 15


def windows(document: str, body: str, size: int = WINDOW, overlap: int = OVERLAP) -> list[ChunkRef]:
    """Character windows of `size` sharing `overlap` characters, ids `<document>#<index>`."""
    chunks, start, index = [], 0, 0
    while True:
        end = min(start + size, len(body))
        chunks.append(ChunkRef(f"{document}#{index}", document, start, end, body[start:end], index))
        if end == len(body):
            return chunks
        start, index = start + size - overlap, index + 1


# A crafted body: 60-char windows with 15 overlap start at 0, 45, 90, 135, 180.
BODY = ("The council met on Tuesday evening in the old town hall. "     # 0..57
        "Mayor Ines Duarte said the \u201cnew bridge\u201d will open\u00a0in  March 2024, "
        "three months later than planned. Engineers blamed a shortage of steel cables "
        "and a wet autumn. Residents asked about tolls; none are planned.")
CHUNKS = windows("doc-a", BODY)
# In the body [80, 135): overlaps chunks 1 [45, 105) and 2 [90, 150) only, whole in neither.
STRADDLING = 'The "new bridge" will open in March 2024, three months'


def span_of(text: str) -> tuple[int, int]:
    start = BODY.index(text)
    return start, start + len(text)


def test_windows_are_as_designed() -> None:
    assert [(c.start_char, c.end_char) for c in CHUNKS][:4] == [(0, 60), (45, 105), (90, 150), (135, 195)]


# -- normalisation ----------------------------------------------------------------------------
@pytest.mark.parametrize("raw, expected", [
    ("\u201cNew Bridge\u201d", '"new bridge"'),
    ("it\u2019s the council\u2018s", "it's the council's"),
    ("2023\u20132024 \u2014 a dash\u2212minus", "2023-2024 - a dash-minus"),
    ("a\u00a0b", "a b"),                                  # NBSP
    ("  a \t\n\r b\u2003c  ", "a b c"),                   # any whitespace run, stripped
    ("STRASSE Stra\u00dfe", "strasse strasse"),           # casefold
    ("\ufb01nal \u2026", "final ..."),                    # NFKC
    ("co\u00adoperate zero\u200bwidth", "cooperate zerowidth"),
    ("cafe\u0301", "caf\u00e9"),                          # combining mark composed by NFKC
])
def test_normalise(raw: str, expected: str) -> None:
    assert normalise(raw) == expected


def test_normalise_offsets_point_back_into_the_text() -> None:
    text = "  \u201cA\u201d\u00a0 \ufb01ne  day\u2014ok "
    normal, starts, ends = normalise_with_offsets(text)
    assert normal == normalise(text) == '"a" fine day-ok'
    assert len(starts) == len(ends) == len(normal)
    assert text[starts[0]:ends[0]] == "\u201c"
    f = normal.index("fine")
    assert text[starts[f]:ends[f + 1]] == "\ufb01"          # both 'f' and 'i' come from the ligature
    assert text[starts[normal.index("day")]:ends[normal.index("ok") + 1]] == "day\u2014ok"


def test_contains_fact_ignores_quotes_case_and_spacing() -> None:
    assert contains_fact(BODY, 'Mayor Ines Duarte said the "new bridge" will open in March 2024')
    assert contains_fact("x  IT\u2019S   here y", "it's here")
    assert not contains_fact(BODY, "the new bridge will open")   # the quotes are part of the text
    assert not contains_fact(BODY, "   ")


# -- matching ---------------------------------------------------------------------------------
def test_fact_inside_one_chunk() -> None:
    fact = "Ines Duarte said"                                    # 63..79: only in chunk 1 [45, 105)
    assert span_of(fact)[0] >= 60 and span_of(fact)[1] <= 90
    matcher = GoldMatcher(CHUNKS)
    assert matcher.match(fact) == ["doc-a#1"]
    assert matcher.match_detail(fact).rule == "chunk"


def test_fact_in_the_overlap_is_in_both_chunks() -> None:
    start, end = 92, 104                                     # inside [90, 105), shared by chunks 1 and 2
    fact = BODY[start:end]
    assert GoldMatcher(CHUNKS).match(fact) == ["doc-a#1", "doc-a#2"]


def test_fact_across_the_boundary_of_two_overlapping_chunks() -> None:
    start, end = span_of("the \u201cnew bridge\u201d will open\u00a0in  March 2024, three months")
    assert 60 < start < 90 and 105 < end <= 135               # overlaps chunks 1 and 2 only, whole in neither
    fact = STRADDLING
    assert not any(contains_fact(c.text, fact) for c in CHUNKS)
    assert contains_fact(BODY, fact)
    matcher = GoldMatcher(CHUNKS, [DocumentRef("doc-a", "Bridge delayed", BODY)])
    detail = matcher.match_detail(fact, "Bridge delayed")
    assert detail.rule == "span" and list(detail.chunk_ids) == ["doc-a#1", "doc-a#2"]
    # The bodies may be left out: they are rebuilt from the chunks' offsets.
    assert GoldMatcher(CHUNKS).match(fact) == ["doc-a#1", "doc-a#2"]
    # The convenience form takes plain tuples.
    tuples = [(c.chunk_id, c.document, c.start_char, c.end_char, c.text) for c in CHUNKS]
    assert gold_chunk_ids(fact, tuples) == ["doc-a#1", "doc-a#2"]


def test_fact_not_in_the_corpus() -> None:
    matcher = GoldMatcher(CHUNKS)
    assert matcher.match("The bridge was cancelled.") == []
    assert matcher.match_detail("The bridge was cancelled.").rule == "none"
    assert matcher.match("") == []


def test_title_picks_the_article_for_split_facts_only() -> None:
    copy = [ChunkRef(c.chunk_id.replace("doc-a", "doc-b"), "doc-b", c.start_char, c.end_char, c.text) for c in CHUNKS]
    docs = [DocumentRef("doc-a", "Bridge delayed", BODY), DocumentRef("doc-b", "Syndicated copy", BODY)]
    matcher = GoldMatcher([*CHUNKS, *copy], docs)
    split = STRADDLING
    assert matcher.match(split, "Syndicated copy") == ["doc-b#1", "doc-b#2"]
    assert matcher.match(split, "\u201cBridge  DELAYED\u201d".strip("\u201c\u201d")) == ["doc-a#1", "doc-a#2"]
    assert matcher.match(split, "Unknown title") == ["doc-a#1", "doc-a#2", "doc-b#1", "doc-b#2"]
    # A fact whole in a chunk is gold wherever it is, whatever the evidence title says.
    assert matcher.match("Mayor Ines Duarte", "Syndicated copy") == ["doc-a#1", "doc-b#1"]


def test_chunks_must_be_slices_of_their_body() -> None:
    bad = [ChunkRef("x#0", "x", 0, 5, "Hello")]
    with pytest.raises(MhgraphError, match="x#0 is not the slice"):
        GoldMatcher(bad, [DocumentRef("x", "X", "Howdy there")])
    with pytest.raises(MhgraphError, match="does not fit"):
        GoldMatcher([ChunkRef("x#0", "x", 0, 9, "Hello")])


# -- coverage ---------------------------------------------------------------------------------
def test_coverage_report_lists_unmatched_facts() -> None:
    missing = "A sentence that is nowhere in the article but is long enough to be cut at eighty characters."
    questions = [
        Question("q0001-aaaaaa", "Q1?", "a", "inference_query",
                 (Evidence("Mayor Ines Duarte", title="Bridge delayed"),
                  Evidence(STRADDLING, title="Bridge delayed"))),
        Question("q0002-bbbbbb", "Q2?", "b", "comparison_query",
                 (Evidence("Mayor Ines Duarte", title="Bridge delayed"), Evidence(missing, title="Elsewhere"))),
        Question("q0003-cccccc", "Q3?", "c", "temporal_query", (Evidence(missing, title="Elsewhere"),)),
        Question("q0004-dddddd", "Q4?", "Insufficient information.", "null_query", ()),
    ]
    matcher = GoldMatcher(CHUNKS, [DocumentRef("doc-a", "Bridge delayed", BODY)])
    report = coverage_report(questions, matcher)
    assert (report.facts, report.matched, report.by_chunk, report.by_span) == (5, 3, 2, 1)
    assert [(u.question_id, u.title, u.fact) for u in report.unmatched] == [
        ("q0002-bbbbbb", "Elsewhere", missing[:80]), ("q0003-cccccc", "Elsewhere", missing[:80])]
    assert report.questions_without_gold == ["q0003-cccccc"]
    assert "unmatched 2" in report.lines()[0]
    assert matcher.gold(questions[0]) == ["doc-a#1", "doc-a#2"]
    assert matcher.gold_sets(questions)["q0004-dddddd"] == []


def test_sample_benchmark_is_fully_covered_with_small_windows() -> None:
    """Every fact of the bundled sample maps to chunks, including facts split by 300/60 windows."""
    corpus = read_corpus(SAMPLE / "corpus.json")
    chunks = [c for a in corpus.articles for c in windows(a.id, a.body, 300, 60)]
    matcher = GoldMatcher.from_articles(corpus.articles, chunks)
    report = coverage_report(load_questions(SAMPLE / "questions.json"), matcher)
    assert report.facts == 43 and report.unmatched == [] and report.questions_without_gold == []
    assert report.by_span > 0

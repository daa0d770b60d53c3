"""The official MultiHop-RAG scoring rule (mhgraph.eval.official): reference values and edge cases."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

import pytest

from mhgraph.eval import official
from mhgraph.eval.official import excerpt, item_text, normalise, score_result, score_texts, summarise
from mhgraph.types import Evidence, Question
from mhgraph.eval.report import compare, to_markdown
from mhgraph.ingest.corpus import parse_datetime
from mhgraph.types import Hop, RetrievalResult, RetrievedChunk

REPO = Path(__file__).resolve().parents[1]
REFERENCE = (REPO.parent / "shared" / "data" / "multihop-rag" / "reference-runs" / "multi-meta-rag-voyage02-first51"
             / "voyage-02_256_32_with_filtering.json")
HEADER = re.compile(r"\[Excerpt from document\]\ntitle: (.*)\npublished_at: (.*)\nsource: (.*)\n"
                    r"Excerpt:\n-----\n(.*)\n-----\Z", re.S)
approx = pytest.approx


@pytest.fixture(scope="module")
def reference() -> list[dict]:
    """The comparative study's Multi-Meta-RAG run on the first 51 questions (CI has ../shared beside the clone)."""
    if not REFERENCE.is_file():
        pytest.fail(f"reference run missing: {REFERENCE} (the shared benchmark data must lie in ../shared "
                    "beside this checkout)", pytrace=False)
    return json.loads(REFERENCE.read_text(encoding="utf-8"))


# -- the reference run ------------------------------------------------------------------------
def test_reference_run_values(reference) -> None:
    """Over its 42 non-null questions the rule gives the values stated in the data's README."""
    scored = [score_texts([i["text"] for i in r["retrieval_list"]], [g["fact"] for g in r["gold_list"]])
              for r in reference if r["gold_list"]]
    assert len(scored) == 42
    mean = {m: sum(s.scores[m] for s in scored) / len(scored) for m in official.METRICS}
    recall = mean.pop("recall@10")
    assert {m: round(v, 4) for m, v in mean.items()} == {
        "hits@10": 0.8095, "hits@4": 0.5476, "map@10": 0.2142, "mrr@10": 0.4647}
    # the README's check: 0.4783 of the 115 gold facts are found in the top 10 (all distinct after
    # normalisation here, so the per-question shares weigh them by question)
    facts = [s.facts for s in scored]
    assert sum(facts) == 115 and round(sum(s.recall_at_10 * n for s, n in zip(scored, facts)) / 115, 4) == 0.4783
    assert round(recall, 4) == 0.4921   # the mean of the per-question shares


def test_reference_run_first_relevant_ranks(reference) -> None:
    ranks = [score_texts([i["text"] for i in r["retrieval_list"]], [g["fact"] for g in r["gold_list"]]).relevant_ranks
             for r in reference[:6]]
    assert ranks == [(1,), (1, 6), (2, 5), (), (), ()]


def test_item_text_rebuilds_every_reference_item(reference) -> None:
    """The header item_text writes, from a chunk's fields, is byte for byte the reference runs' text."""
    items = [i["text"] for r in reference for i in r["retrieval_list"]]
    assert len(items) == 468
    for text in items:
        title, published, source, body = HEADER.match(text).groups()
        chunk = RetrievedChunk("c", 1.0, 1, text=body, title=title, source=source,
                               published_at=parse_datetime(published))
        assert item_text(chunk) == text


# -- edge cases of the rule -------------------------------------------------------------------
def test_header_fields_present() -> None:
    when = datetime.fromisoformat("2023-09-26T21:11:15+00:00")
    chunk = RetrievedChunk("c", 1.0, 1, text="Body text.", title="A title", source="The Verge", published_at=when)
    assert item_text(chunk) == ("[Excerpt from document]\ntitle: A title\npublished_at: 2023-09-26T21:11:15+00:00\n"
                                "source: The Verge\nExcerpt:\n-----\nBody text.\n-----")
    assert excerpt("x") == "[Excerpt from document]\ntitle: \npublished_at: \nsource: \nExcerpt:\n-----\nx\n-----"


def test_header_text_can_match_a_fact() -> None:
    """The header is part of the matched text, as in the reference (a fact naming the source matches it)."""
    assert score_texts([excerpt("body", "T", None, "The Verge")], ["source: The Verge"]).relevant_ranks == (1,)


def test_normalise_removes_only_ascii_space_and_newline() -> None:
    assert normalise("a b\nc  d\n\n") == "abcd"
    assert normalise("a\tb\u00a0c\r\nD.") == "a\tb\u00a0c\rD."   # tab, NBSP, CR, case, punctuation kept


def test_case_punctuation_and_other_whitespace_are_kept() -> None:
    fact = "The CEO said: “Fine.”"
    assert score_texts(["x The CEO\nsaid:  “Fine.” y"], [fact]).relevant_ranks == (1,)
    assert score_texts(["the ceo said: “fine.”"], [fact]).relevant_ranks == ()          # case
    assert score_texts(['The CEO said: "Fine."'], [fact]).relevant_ranks == ()          # quotes
    assert score_texts(["The CEO said - Fine."], ["The CEO said: Fine."]).relevant_ranks == ()
    assert score_texts(["The\tCEO said"], ["The CEO said"]).relevant_ranks == ()        # a tab stays
    assert score_texts(["The\u00a0CEO said"], ["The CEO said"]).relevant_ranks == ()    # NBSP stays
    assert score_texts(["The CEO said"], ["The\u00a0CEO said"]).relevant_ranks == ()


def test_fact_straddling_two_chunks_is_never_matched() -> None:
    body = "First sentence here. The fact runs across the boundary of two chunks. Last one."
    cut = body.index("boundary")
    chunks = [excerpt(body[:cut]), excerpt(body[cut - 20:])]   # overlapping chunks, the fact in neither whole
    fact = "The fact runs across the boundary of two chunks."
    assert fact in body and all(fact not in c for c in chunks)
    score = score_texts(chunks, [fact])
    assert score.relevant_ranks == () and score.scores == dict.fromkeys(official.METRICS, 0.0)


def test_map_counts_facts_first_found_and_divides_by_min_of_facts_and_10() -> None:
    facts = ["fact A.", "fact B.", "fact C."]
    texts = ["fact A.", "nothing", "fact A. again", "fact B. and fact A.", *["x"] * 6, "fact C."]
    s = score_texts(texts, facts)
    # rank 1 finds A; rank 3 holds A again (relevant, but nothing new); rank 4 finds B; C is at rank 11
    assert s.relevant_ranks == (1, 3, 4) and s.first_found == (1, 0, 1)
    assert s.map_at_10 == approx((1 / 1 + 0 / 3 + 1 / 4) / 3)
    assert (s.hits_at_4, s.hits_at_10, s.mrr_at_10) == (1.0, 1.0, 1.0)
    # two facts in one item both count at that rank
    assert score_texts(["nothing", "fact A. fact B."], facts[:2]).map_at_10 == approx((2 / 2) / 2)
    # more than 10 facts: the divisor is 10
    many = [f"fact {i}." for i in range(12)]
    assert score_texts(["fact 0. fact 1."], many).map_at_10 == approx(2 / 10)
    # the same scores from the facts each item holds, known beforehand (a ranking re-ordered many times)
    gold = [normalise(f) for f in facts]
    held = [{g for g in gold if g in normalise(t)} for t in texts]
    assert official.score_found(held, gold) == s
    assert official.score_found(list(reversed(held)), gold) == score_texts(list(reversed(texts)), facts)


def test_duplicate_facts_count_once_as_in_the_reference() -> None:
    """The reference keeps a list of found (normalised) facts, so a repeated fact adds 1, not 2."""
    s = score_texts(["fact A."], ["fact A.", "fact  A.", "fact B."])
    assert s.first_found == (1,) and s.map_at_10 == approx(1 / 3)


def test_hits_and_mrr_look_at_ranks_up_to_10_only() -> None:
    texts = ["x"] * 4 + ["fact A."] + ["x"] * 5 + ["fact B."]
    s = score_texts(texts, ["fact A.", "fact B."])
    assert s.relevant_ranks == (5,)
    assert (s.hits_at_4, s.hits_at_10, s.mrr_at_10) == (0.0, 1.0, approx(1 / 5))
    assert score_texts(["x"] * 10 + ["fact A."], ["fact A."]).scores == dict.fromkeys(official.METRICS, 0.0)
    assert score_texts([], ["fact A."]).hits_at_10 == 0.0


def test_null_questions_are_skipped_and_unmatched_ones_count_as_zero() -> None:
    def q(qid: str, qtype: str, *facts: str) -> Question:
        return Question(qid, "?", "", qtype, tuple(Evidence(f) for f in facts))

    def res(*texts: str) -> RetrievalResult:
        return RetrievalResult("?", "m", [Hop(1, [RetrievedChunk(f"c{i}", 1.0 - i / 10, i + 1, text=t)
                                                 for i, t in enumerate(texts)])])

    questions = [q("a", "inference_query", "fact A."), q("b", "inference_query", "not in any chunk."),
                 q("n", "null_query"), q("c", "comparison_query", "fact C.")]
    results = {"a": res("fact A."), "b": res("fact A."), "n": res("fact A."), "c": res("x", "fact C.")}
    scores = official.score_all(questions, results)
    assert scores["n"] is None and scores["b"].scores == dict.fromkeys(official.METRICS, 0.0)
    block = summarise(questions, scores)
    assert block["questions"] == 3 and block["skipped_null"] == 1 and block["rule"] == official.RULE
    assert block["overall"]["n"] == 3 and block["overall"]["hits@10"] == approx(2 / 3)
    assert block["overall"]["mrr@10"] == approx((1 + 0 + 0.5) / 3)
    hops = {t: block["by_type"][t].pop("hops") for t in ("comparison_query", "inference_query")}
    assert block["by_type"] == {"comparison_query": {"n": 1, "hits@4": 1.0, "hits@10": 1.0, "map@10": 0.5,
                                                     "mrr@10": 0.5, "recall@10": 1.0},
                                "inference_query": {"n": 2, "hits@4": 0.5, "hits@10": 0.5, "map@10": 0.5,
                                                    "mrr@10": 0.5, "recall@10": 0.5}}
    # hop-conditioned P/R/F1 under the official matching: "x" and "fact C." hold one fact of one
    assert hops["comparison_query"] == [{"hop": 1, "precision": 0.5, "recall": 1.0, "f1": approx(2 / 3)}]
    assert hops["inference_query"] == [{"hop": 1, "precision": 0.5, "recall": 0.5, "f1": 0.5}]
    with pytest.raises(ValueError):
        score_texts(["x"], [])


def test_score_result_uses_the_final_ranking_with_headers() -> None:
    """Chunks of several hops are scored in final-ranking order (best score first, each once)."""
    when = datetime.fromisoformat("2023-10-01T14:00:29+00:00")
    hop1 = Hop(1, [RetrievedChunk("a", 0.5, 1, text="nothing"), RetrievedChunk("b", 0.4, 2, text="fact B.")])
    hop2 = Hop(2, [RetrievedChunk("c", 0.9, 1, text="fact A.", title="T", published_at=when),
                   RetrievedChunk("b", 0.3, 2, text="fact B.")])
    question = Question("q", "?", "", "inference_query", (Evidence("fact A."), Evidence("fact B.")))
    score = score_result(question, RetrievalResult("?", "m", [hop1, hop2]))
    assert score.relevant_ranks == (1, 3) and score.map_at_10 == approx((1 + 1 / 3) / 2)
    assert score.to_json()["relevant_ranks"] == [1, 3]
    # hop by hop over the accumulated set: hop 1 holds a and b (fact B), hop 2 adds c (fact A);
    # b fetched again at hop 2 is not counted twice
    assert score.hops == (approx((0.5, 0.5, 0.5)), approx((2 / 3, 1.0, 0.8)))


# -- reports ----------------------------------------------------------------------------------
def _summary(scoring: str, with_official: bool = True) -> dict:
    group = {"n": 2, "hops": [{"hop": 1, "retrieved": 4.0, "precision": 0.5, "recall": 0.5, "f1": 0.5}],
             "ranking": {"hits@4": 1.0, "hits@10": 1.0, "map@10": 0.75, "mrr@10": 1.0}, "avg_returned": 4.0}
    s = {"method": "vector", "label": f"run-{scoring}", "params": {"top_k": 4}, "questions": 3, "scored": 2,
         "r_max": 1, "overall": group, "by_type": {"inference_query": group}, "by_difficulty": {},
         "null": {"count": 1, "null_questions": 1, "unmatched": 0, "avg_returned": 4.0, "abstained": 0,
                  "unmatched_ids": []},
         "latency_ms": {"p50": 1.0, "p95": 2.0, "mean": 1.5}, "scoring": scoring}
    if with_official:
        block = {"n": 2, "hits@4": 0.5, "hits@10": 0.5, "map@10": 0.125, "mrr@10": 0.25}
        s["official"] = {"rule": official.RULE, "questions": 2, "skipped_null": 1, "overall": block,
                         "by_type": {"inference_query": block}}
    return s


def test_markdown_shows_the_scorings_asked_for() -> None:
    both = to_markdown(_summary("both"))
    assert f"## Ours beside the {official.RULE}" in both and "Hop-conditioned" in both
    assert "| all | ours | 2 | 1.0000 | 1.0000 | 0.7500 | 1.0000 |" in both
    assert "| all | official | 2 | 0.5000 | 0.5000 | 0.1250 | 0.2500 |" in both
    assert "| inference_query | official | 2 |" in both
    assert "ours scored 2 (with gold chunks)" in both and f"{official.RULE} scored 2" in both
    only = to_markdown(_summary("official"))
    assert f"## Ranking metrics, {official.RULE}" in only and "Hop-conditioned" not in only
    assert "| ours |" not in only and "| all | official | 2 |" in only
    ours = to_markdown(_summary("ours", with_official=False))
    assert official.RULE not in ours and "Hop-conditioned" in ours


def test_compare_adds_official_columns_when_a_run_has_them(tmp_path: Path) -> None:
    markdown, _ = compare([_summary("both"), _summary("ours", with_official=False)], tmp_path)
    header = next(line for line in markdown.splitlines() if line.startswith("| run |"))
    assert "| MRR@10 | Hits@4 (official) | Hits@10 (official) | MAP@10 (official) | MRR@10 (official) |" in header
    rows = [line for line in markdown.splitlines() if line.startswith("| run-")]
    assert "| 1.0000 | 0.5000 | 0.5000 | 0.1250 | 0.2500 |" in rows[0]
    assert "| 1.0000 | - | - | - | - |" in rows[1]
    plain, _ = compare([_summary("ours", with_official=False)], tmp_path)
    assert "(official)" not in plain


def test_fact_coverage_lists_the_facts_the_rule_can_never_match() -> None:
    """A fact whole in a chunk is reachable (spaces and newlines aside); one split across two
    chunks, or differing in case from the text, is listed."""
    chunks = ["Alpha  beta\ngamma delta. The jury found", "found for the plaintiff on Monday. Epsilon."]
    question = Question("q0001-x", "?", "Yes", "inference_query", (
        Evidence("Alphabeta gamma\ndelta.", title="A"),               # whole: spaces/newline only differ
        Evidence("The jury found for the plaintiff", title="B"),       # cut by the chunk boundary
        Evidence("EPSILON.", title="C"),                                # case is kept
    ))
    null = Question("q0002-y", "?", "Insufficient information.", "null_query", ())
    cover = official.fact_coverage([question, null], chunks)
    assert (cover.facts, cover.matched) == (3, 1)
    assert [(u.question_id, u.title) for u in cover.unmatched] == [("q0001-x", "B"), ("q0001-x", "C")]
    lines = cover.lines()
    assert lines[0].startswith(f"{official.RULE}: 1 of 3 facts lie whole in one chunk") and len(lines) == 3

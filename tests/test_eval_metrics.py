"""Metrics computed by hand: hop-conditioned P/R/F1, ranking metrics through ranx, difficulty, reports."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mhgraph.eval.difficulty import (
    DIFFICULTY_EDGES, bin_label, bin_labels, cosine_similarities, difficulties, difficulty, quantile_edges,
)
from mhgraph.eval.metrics import (
    HopScore, aggregate, grouped, hop_scores, null_scores, prf, ranking_scores, score_results,
)
from mhgraph.types import Evidence, Question
from mhgraph.eval.report import compare, summarise, to_markdown, write_report
from mhgraph.types import Hop, RetrievalResult, RetrievedChunk

approx = pytest.approx


def result(*hops: list[str] | list[tuple[str, float]], seconds: float = 0.1, method: str = "m") -> RetrievalResult:
    """A RetrievalResult whose hop i holds the given chunk ids (scores fall with rank unless given)."""
    built = []
    for i, ids in enumerate(hops, start=1):
        chunks = []
        for rank, item in enumerate(ids, start=1):
            cid, score = item if isinstance(item, tuple) else (item, 1.0 / (10 * i + rank))
            chunks.append(RetrievedChunk(cid, score, rank))
        built.append(Hop(i, chunks))
    return RetrievalResult("question?", method, built, seconds=seconds)


def question(qid: str, qtype: str = "inference_query", facts: int = 2) -> Question:
    return Question(qid, f"{qid}?", "a", qtype, tuple(Evidence(f"fact {k}") for k in range(facts)))


def scores(hs: list[HopScore]) -> list[float]:
    """(|D_r|, P_r, R_r, F1_r) of each hop, flattened (pytest.approx takes flat lists)."""
    return [x for h in hs for x in (h.retrieved, h.precision, h.recall, h.f1)]


def flat(rows: list[tuple[float, ...]]) -> list[float]:
    return [x for row in rows for x in row]


# -- hop-conditioned P/R/F1 -------------------------------------------------------------------
def test_three_hops_by_hand_with_a_duplicate() -> None:
    gold = {"a", "b", "c"}
    r = result(["a", "x"], ["x", "b", "y"], ["z", "w"])      # x again at hop 2: counted once
    got = hop_scores(r, gold)
    # D1 = {a,x}: P 1/2, R 1/3, F1 = 2(1/2)(1/3)/(5/6) = 2/5
    # D2 = {a,x,b,y}: P 2/4, R 2/3, F1 = 2(1/2)(2/3)/(7/6) = 4/7
    # D3 = {a,x,b,y,z,w}: P 2/6, R 2/3, F1 = 2(1/3)(2/3)/1 = 4/9
    assert scores(got) == approx(flat([(2, 1 / 2, 1 / 3, 2 / 5), (4, 1 / 2, 2 / 3, 4 / 7), (6, 1 / 3, 2 / 3, 4 / 9)]))
    recalls = [h.recall for h in got]
    assert recalls == sorted(recalls)                        # non-decreasing


def test_fewer_hops_than_r_max_keeps_the_last_set() -> None:
    got = hop_scores(result(["a", "b", "q"]), {"a", "b", "c"}, r_max=3)
    # D1 = D2 = D3 = {a,b,q}: P 2/3, R 2/3, F1 2/3
    assert [h.hop for h in got] == [1, 2, 3]
    assert scores(got) == approx(flat([(3, 2 / 3, 2 / 3, 2 / 3)] * 3))


def test_empty_run_and_no_hops_score_zero() -> None:
    assert scores(hop_scores(result([]), {"a"}, r_max=2)) == [0.0] * 8
    assert scores(hop_scores(result(), {"a"}, r_max=2)) == [0.0] * 8
    assert prf([], []) == (0.0, 0.0, 0.0)


# -- ranking metrics --------------------------------------------------------------------------
RANKED = ["a", "b", "c", "d", "e"]


def test_ranking_metrics_by_hand() -> None:
    rankings = {"q1": RANKED, "q2": RANKED, "q3": RANKED, "q4": [], "q5": RANKED}
    gold = {"q1": {"b", "d"}, "q2": {"z"}, "q3": {"e"}, "q4": {"a"}, "q5": set()}
    got = ranking_scores(rankings, gold, recall_at=(4,))
    assert set(got) == {"q1", "q2", "q3", "q4"}              # q5 has no gold: left out
    # q1: first hit at rank 2; AP@10 = (1/2 + 2/4) / 2 = 1/2; recall@4 = 2/2
    assert got["q1"] == approx({"hits@4": 1, "hits@10": 1, "map@10": 0.5, "mrr@10": 0.5,
                                "recall@4": 1.0, "recall@all": 1.0})
    assert got["q2"] == approx(dict.fromkeys(got["q2"], 0.0))
    # q3: only hit at rank 5: outside the top 4
    assert got["q3"] == approx({"hits@4": 0, "hits@10": 1, "map@10": 0.2, "mrr@10": 0.2,
                                "recall@4": 0.0, "recall@all": 1.0})
    assert got["q4"] == dict.fromkeys(got["q4"], 0.0)        # empty run: zeros, still counted


def test_map_divides_by_all_gold() -> None:
    got = ranking_scores({"q": RANKED}, {"q": {"a", "z"}})
    assert got["q"]["map@10"] == approx(0.5)                 # (1/1) / 2: the unretrieved gold counts


def test_every_run_empty_gives_zeros_without_ranx_error() -> None:
    got = ranking_scores({"q1": [], "q2": []}, {"q1": {"a"}, "q2": {"b"}})
    assert got == {"q1": dict.fromkeys(got["q1"], 0.0), "q2": dict.fromkeys(got["q2"], 0.0)}
    assert ranking_scores({"q1": ["a"]}, {"q1": set()}) == {}


def test_ranx_follows_our_order_on_ties() -> None:
    r = result([("x", 0.5), ("b", 0.5)])                     # tie: retrieval order decides
    ranking = [c.chunk_id for c in r.final_ranking()]
    assert ranking == ["x", "b"]
    assert ranking_scores({"q": ranking}, {"q": {"b"}})["q"]["mrr@10"] == approx(0.5)


# -- per question and averages ----------------------------------------------------------------
@pytest.fixture()
def scored_run():
    questions = [question("q1", facts=3), question("q2", "comparison_query"), question("q3", "comparison_query"),
                 question("q4", "null_query", facts=0), question("q5", "temporal_query")]
    results = {
        "q1": result(["a", "x"], ["x", "b", "y"], ["z", "w"], seconds=0.010),
        "q2": result(["c", "d"], seconds=0.020),               # one hop only; r_max is 3
        "q3": result([], seconds=0.030),                       # empty run
        "q4": result(["n1", "n2"], seconds=0.040),             # null question
        "q5": result(["u"], seconds=0.050),                    # facts matched no chunk
    }
    gold = {"q1": ["a", "b", "c"], "q2": ["c"], "q3": ["k"], "q4": [], "q5": []}
    return score_results(questions, results, gold, difficulty={"q1": 2.3, "q2": 1.4, "q3": 1.2})


def test_score_results_and_macro_averages(scored_run) -> None:
    by_id = {r.question_id: r for r in scored_run}
    assert [len(r.hops) for r in scored_run] == [3] * 5
    assert by_id["q2"].method_hops == 1 and by_id["q2"].returned == 2
    assert by_id["q3"].returned == 0 and by_id["q3"].ranking["hits@10"] == 0.0
    assert by_id["q4"].ranking == {} and not by_id["q4"].scored

    overall = aggregate(scored_run)
    assert overall.n == 3                                     # q4 (null) and q5 (no gold) left out
    # F1 per hop: q1 (2/5, 4/7, 4/9); q2 (P 1/2, R 1, F1 2/3 at every hop); q3 zeros
    assert [h.f1 for h in overall.hops] == approx([(2 / 5 + 2 / 3) / 3, (4 / 7 + 2 / 3) / 3, (4 / 9 + 2 / 3) / 3])
    assert [h.recall for h in overall.hops] == approx([(1 / 3 + 1) / 3, (2 / 3 + 1) / 3, (2 / 3 + 1) / 3])
    assert [h.retrieved for h in overall.hops] == approx([4 / 3, 6 / 3, 8 / 3])
    assert overall.avg_returned == approx((6 + 2 + 0) / 3)
    # q1 ranks a,x,b,y,z,w (hop-1 scores beat later hops): hit at 1 and 3; q2 ranks c,d: hit at 1
    assert overall.ranking["mrr@10"] == approx((1 + 1 + 0) / 3)
    assert overall.ranking["map@10"] == approx(((1 + 2 / 3) / 3 + 1 + 0) / 3)
    assert overall.ranking["recall@all"] == approx([h.recall for h in overall.hops][-1])

    types = grouped(scored_run, lambda r: r.question_type)
    assert set(types) == {"inference_query", "comparison_query"} and types["comparison_query"].n == 2

    null = null_scores(scored_run)
    assert (null.count, null.null_questions, null.unmatched, null.avg_returned, null.abstained) == (2, 1, 1, 2.0, 0)
    assert null.unmatched_ids == ("q5",)


def test_summary_report_and_compare(scored_run, tmp_path: Path) -> None:
    summary = summarise(scored_run, method="treehop", params={"top_k": 5, "hops": 3})
    assert summary["label"] == "treehop hops=3 top_k=5"
    assert (summary["questions"], summary["scored"], summary["r_max"]) == (5, 3, 3)
    assert summary["null"]["null_questions"] == 1
    assert summary["latency_ms"]["p50"] == approx(30.0)
    assert summary["latency_ms"]["p95"] == approx(48.0)      # numpy linear interpolation
    assert list(summary["by_difficulty"]) == ["[1,1.5)", "[2,2.5)"]
    assert summary["by_difficulty"]["[1,1.5)"]["n"] == 2
    json.dumps(summary)                                      # JSON-ready

    markdown = to_markdown(summary)
    assert "# Retrieval report: treehop hops=3 top_k=5" in markdown
    assert "| comparison_query | 2 |" in markdown and "| [1,1.5) | 2 |" in markdown

    files = write_report(summary, tmp_path / "out")
    assert json.loads(files.summary.read_text())["scored"] == 3
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in files.plots) and len(files.plots) == 2

    single = summarise([r for r in scored_run if r.question_id == "q2"], method="mmr", params={"top_k": 10})
    table, pngs = compare([summary, single], tmp_path / "cmp")
    rows = [line for line in table.splitlines() if line.startswith("| treehop") or line.startswith("| mmr")]
    assert len(rows) == 2 and "F1@3" in table
    assert "| mmr top_k=10 | mmr | 1 | 0.6667 | 0.6667 | 0.6667 | 0.6667 (1) |" in table
    assert len(pngs) == 1 and pngs[0].read_bytes().startswith(b"\x89PNG")


# -- difficulty -------------------------------------------------------------------------------
def test_difficulty_by_hand() -> None:
    q = [1.0, 0.0]
    gold = [[1.0, 0.0], [0.0, 2.0]]                          # cosines 1 and 0: s = 0.5
    assert cosine_similarities(q, gold) == approx([1.0, 0.0])
    d = difficulty(3, q, gold)
    assert (d.hops, d.similarity, d.value) == (3, approx(0.5), approx(2.5))
    assert difficulty(2, q, []) is None
    got = difficulties({"a": 2, "b": 0}, {"a": ["c1"], "b": []}, {"a": q, "b": q}, {"c1": [1.0, 1.0]})
    assert set(got) == {"a"} and got["a"].value == approx(2 - np.sqrt(0.5))


def test_difficulty_bins() -> None:
    assert DIFFICULTY_EDGES[0] == 0.0 and DIFFICULTY_EDGES[-1] == 4.0
    labels = bin_labels()
    assert labels[0] == "<0" and labels[-1] == ">=4" and len(labels) == len(DIFFICULTY_EDGES) + 1
    assert bin_label(1.0) == "[1,1.5)" and bin_label(1.49) == "[1,1.5)" and bin_label(1.5) == "[1.5,2)"
    assert bin_label(-0.2) == "<0" and bin_label(4.0) == ">=4"
    edges = quantile_edges([1.1, 1.2, 1.3, 2.1, 2.2, 2.6, 3.4, 3.5], bins=2)
    assert len(edges) == 3 and edges[0] == 1.1
    assert [bin_label(v, edges) for v in (1.1, 3.5)] == [bin_labels(edges)[1], bin_labels(edges)[2]]

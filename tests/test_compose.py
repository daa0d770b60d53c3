"""Composed pipelines (`compose`): the stages line and its errors, fusion, and pipelines on the
real server: a pipeline of one stage is that method, a filter stage is metarag's filtered search,
an expansion joins the ranking, a reranker orders the end, a flat corpus skips the filter with a
note, a missing claim layer is one line, and an evaluation reports where gold is lost."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mhgraph.compose.fusion import fuse
from mhgraph.compose.stages import parse_stages
from mhgraph.errors import MhgraphError
from mhgraph.types import RetrievedChunk


def test_stages_parse_in_any_order_with_defaults() -> None:
    stages = parse_stages("rerank=bi-encoder:bge-small-en-v1.5 expand=ppr,treehop candidates=vector filter=rules")
    assert stages.describe() == ("filter=rules candidates=vector expand=ppr,treehop fuse=rrf "
                                 "rerank=bi-encoder:bge-small-en-v1.5")
    assert parse_stages("").describe() == "filter=none candidates=hybrid expand=none fuse=rrf rerank=none"
    assert parse_stages("expand=none rerank=none").expand == ()


def test_an_expansion_written_with_a_weight_keeps_it_in_the_line() -> None:
    stages = parse_stages("expand=treehop,ircot:0.5 filter=rules")
    assert stages.expand == ("treehop", "ircot")
    assert stages.describe() == "filter=rules candidates=hybrid expand=treehop,ircot:0.5 fuse=rrf rerank=none"
    assert parse_stages(stages.describe()) == stages
    # every digit written back, so the line records the weight that runs
    assert parse_stages("expand=ircot:0.1234567").describe().split()[2] == "expand=ircot:0.1234567"
    assert parse_stages("expand=ircot:-0").describe().split()[2] == "expand=ircot:0"
    # its own weight, whatever the option says; the others take the option's
    assert stages.weight("ircot", 1.0) == 0.5 and stages.weight("treehop", 0.25) == 0.25


@pytest.mark.parametrize("text, message", [
    ("expand=nothing", "stage 'expand': 'nothing' cannot expand (methods: vector, bm25"),
    ("expand=compose", "stage 'expand': 'compose' cannot expand"),
    ("expand=ppr,ppr", "stage 'expand': a method is named twice"),
    ("expand=ppr:0.5,ppr", "stage 'expand': a method is named twice"),
    ("expand=ircot:half", "stage 'expand': the weight of ircot must be a number, got 'half'"),
    ("expand=ircot:1.5", "stage 'expand': the weight of ircot must be from 0 to 1, got '1.5'"),
    ("expand=ircot:nan", "stage 'expand': the weight of ircot must be from 0 to 1, got 'nan'"),
    ("expand=:0.5", "stage 'expand': ':0.5': write METHOD or METHOD:W"),
    ("expand=nothing:0.5", "stage 'expand': 'nothing' cannot expand"),
    ("filter=regex", "stage 'filter': unknown filter extractor 'regex' (extractors: rules, llm, reference, gold)"),
    ("filter=rules:words", "stage 'filter': write EXTRACTOR or EXTRACTOR:drop-words, got 'rules:words'"),
    ("filter=regex:drop-words", "stage 'filter': unknown filter extractor 'regex'"),
    ("filter=none:drop-words", "stage 'filter': drop-words needs an extractor: write filter=EXTRACTOR:drop-words"),
    ("filter=:drop-words", "stage 'filter': drop-words needs an extractor: write filter=EXTRACTOR:drop-words"),
    ("filter=rules:drop-words candidates=vector", ("stage 'filter': drop-words leaves the filter's words out of the "
                                                   "hybrid search's BM25 query; vector candidates have none")),
    ("candidates=dense", "stage 'candidates': Input should be 'vector', 'bm25' or 'hybrid', got 'dense'"),
    ("fuse=max", "stage 'fuse': Input should be 'rrf' or 'linear', got 'max'"),
    ("candidates=vector:100", "stage 'candidates': only hybrid candidates fuse two searches: write vector, without"),
    ("candidates=hybrid:0", "stage 'candidates': Input should be greater than 0, got 0"),
    ("candidates=hybrid:many", "stage 'candidates': the depth of hybrid must be a whole number, got 'many'"),
    ("candidates=dense:5", "stage 'candidates': Input should be 'vector', 'bm25' or 'hybrid', got 'dense'"),
    ("rerank=none:30", "stage 'rerank': the chunks a reranker scores are given with one: write rerank=RERANKER:N"),
    ("rerank=:30", "stage 'rerank': the chunks a reranker scores are given with one: write rerank=RERANKER:N"),
    ("rerank=nanoranker:0", "stage 'rerank': Input should be greater than 0, got 0"),
    ("rerank=kfold:30", ("stage 'rerank': kfold needs its folder: write rerank=kfold:DIR:N (one named by digits "
                         "alone: kfold:./30)")),
    ("rerank=bi-encoder:30", "stage 'rerank': bi-encoder needs its model: write rerank=bi-encoder:MODEL:N"),
    ("rerank=sentences:30", "stage 'rerank': sentences needs its model: write rerank=sentences:MODEL:N"),
    ("bogus=1", "unknown stage 'bogus' (stages: filter, share, candidates, expand, fuse, rerank, balance, diver"),
    ("share=source", "stage 'share': the candidates are shared among the sources a filter names: add a filter stage"),
    ("filter=rules share=date", "stage 'share': Input should be 'source', got 'date'"),
    ("balance=outlet", "stage 'balance': Input should be 'source' or 'document', got 'outlet'"),
    ("diversify=0", "stage 'diversify': Input should be greater than 0, got '0'"),
    ("diversify=two", "stage 'diversify': Input should be a valid integer"),
    ("expand", "stage 'expand': write STAGE=VALUE"),
    ("fuse=rrf fuse=linear", "stage 'fuse' given twice"),
])
def test_bad_stages_are_one_line(text: str, message: str) -> None:
    with pytest.raises(MhgraphError) as caught:
        parse_stages(text)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


def test_named_pipelines_come_from_the_config_file_only() -> None:
    from mhgraph.cli.method_options import _flags
    from mhgraph.options import OptionSources, resolve
    from mhgraph.retrieval.compose import ComposeOptions

    table = {"compose": {"stages": "mine", "pipelines": {"mine": "candidates=vector expand=bm25 fuse=linear"}}}
    options, origins = resolve("compose", ComposeOptions, OptionSources({}, table, {}),
                               environ={"MHGRAPH_COMPOSE_PIPELINES": "ignored"})
    assert options.pipeline.describe() == "filter=none candidates=vector expand=bm25 fuse=linear rerank=none"
    assert origins["pipelines"] == "file"
    assert "--compose-pipelines" not in _flags() and "--stages" in _flags()     # a table: no flag
    with pytest.raises(MhgraphError, match=r"^unknown pipeline 'other' \(named: in-domain, mine, training-free, "
                                           r"training-free-fast; or write its stages"):
        ComposeOptions(stages="other", pipelines=table["compose"]["pipelines"])
    # the shipped presets, by name; a pipeline of the same name in the config file replaces it
    assert ComposeOptions(stages="training-free").pipeline.describe() == \
        "filter=rules:drop-words share=source candidates=hybrid:200 expand=none fuse=rrf " \
        "rerank=sentences:all-MiniLM-L6-v2:50"
    assert ComposeOptions(stages="training-free-fast").pipeline.describe() == \
        "filter=rules:drop-words share=source candidates=hybrid:200 expand=none fuse=rrf rerank=none"
    assert ComposeOptions(stages="training-free", pipelines={"training-free": "candidates=bm25"}).pipeline.candidates \
        == "bm25"
    # the in-domain preset: TreeHop's hops, then the k-fold cross-encoder where 'mhgraph reranker
    # export' puts it with the sentence reranker, over the 50 candidates and TreeHop's 20 (its options)
    assert ComposeOptions(stages="in-domain").pipeline.describe() == \
        "filter=rules:drop-words share=source candidates=hybrid:200 expand=treehop fuse=rrf " \
        "rerank=kfold:models/reranker-onnx+sentences:all-MiniLM-L6-v2:70"
    with pytest.raises(MhgraphError, match="pipeline 'loop': write its stages as STAGE=VALUE, not another name"):
        ComposeOptions(stages="candidates=vector", pipelines={"loop": "mine"})
    with pytest.raises(MhgraphError, match="^stage 'fuse'"):
        ComposeOptions(stages="bad", pipelines={"bad": "fuse=max"})
    # resolved from the config file and the environment, a bad line names where each setting came from
    bad = OptionSources({}, {"compose": {"pipelines": {"mine": "candidates=hybrid bogus=1"}}}, {},
                        path=Path("/etc/mhgraph.toml"))
    with pytest.raises(MhgraphError, match=r"^unknown stage 'bogus' .* \(settings: 'compose.stages' from "
                                           r"\$MHGRAPH_COMPOSE_STAGES, 'compose.pipelines' from /etc/mhgraph.toml\)$"):
        resolve("compose", ComposeOptions, bad, environ={"MHGRAPH_COMPOSE_STAGES": "mine"})
    # an empty line is not every stage's own default (no expansion): the option's default is left out
    with pytest.raises(MhgraphError, match=r"^an empty stages line: .* leave it out for the default "
                                           r"\(candidates=hybrid expand=ppr fuse=rrf\) \(settings: 'compose.stages' "
                                           r"from flag\)$"):
        resolve("compose", ComposeOptions, OptionSources({"compose": {"stages": " "}}, {}, {}), environ={})


def test_a_preset_sets_its_options_where_nothing_else_did() -> None:
    from mhgraph.options import OptionSources, resolve
    from mhgraph.retrieval.compose import PRESET_OPTIONS, RANKS_SHARE, ComposeOptions, rerank_weight

    preset = ComposeOptions(stages="in-domain").with_preset()
    assert {k: getattr(preset, k) for k in PRESET_OPTIONS["in-domain"]} == PRESET_OPTIONS["in-domain"]
    assert (preset.candidate_k, preset.expand_k, preset.rerank_fusion) == (50, 20, "ranks")
    # fused by ranks the rerankers weigh half unless set; by scores, the reranker's own weight
    combined = type("Combined", (), {"rerank_weight": 0.6})()
    assert rerank_weight(combined, preset) == RANKS_SHARE == 0.5
    assert rerank_weight(combined, preset.model_copy(update={"rerank_weight": 0.7})) == 0.7
    # a value set anywhere (here the config file; flags and the environment alike) is kept
    table = {"compose": {"stages": "in-domain", "expand_k": 7, "rerank_fusion": "scores"}}
    options, _ = resolve("compose", ComposeOptions, OptionSources({}, table, {}), environ={})
    mine = options.with_preset()
    assert (mine.expand_k, mine.rerank_fusion, mine.candidate_k) == (7, "scores", 50)
    assert rerank_weight(combined, mine) == 0.6
    # the server rebuilds the options with a request's over them: what was left unset stays unset
    served = ComposeOptions.model_validate({**options.model_dump(exclude_unset=True), "expand_k": 9}).with_preset()
    assert (served.expand_k, served.candidate_k, served.rerank_fusion) == (9, 50, "scores")
    # a pipeline of the same name in the config file replaces the preset, and its options with it
    own = ComposeOptions(stages="in-domain", pipelines={"in-domain": "candidates=bm25"}).with_preset()
    assert (own.candidate_k, own.rerank_fusion) == (30, "scores")
    # other pipelines, and a written line, are left as they are
    assert ComposeOptions(stages="training-free").with_preset() == ComposeOptions(stages="training-free")
    assert ComposeOptions(stages="candidates=bm25").with_preset().expand_k == 10


def test_the_in_domain_preset_says_how_to_make_its_reranker(tmp_path, monkeypatch) -> None:
    """Where the k-fold reranker is not there yet, one line names the command that makes it."""
    from mhgraph.rerank.models import load_reranker
    from mhgraph.retrieval.compose import IN_DOMAIN_RERANKER

    monkeypatch.chdir(tmp_path)
    with pytest.raises(MhgraphError, match=r"models/reranker-onnx/folds.json: not found .*'mhgraph reranker train'") \
            as caught:
        load_reranker(IN_DOMAIN_RERANKER)
    assert "\n" not in str(caught.value)


def _chunks(*pairs: tuple[str, float]) -> list[RetrievedChunk]:
    return [RetrievedChunk(cid, score, rank) for rank, (cid, score) in enumerate(pairs, start=1)]


def test_fusion_by_reciprocal_rank_and_linear() -> None:
    a = _chunks(("x", 0.9), ("y", 0.5), ("z", 0.1))
    b = _chunks(("y", 30.0), ("w", 20.0), ("x", 10.0))
    rrf = fuse([a, b], "rrf")
    # x: 1/61 + 1/63, y: 1/62 + 1/61, w: 1/62, z: 1/63
    assert [c.chunk_id for c in rrf] == ["y", "x", "w", "z"] and [c.rank for c in rrf] == [1, 2, 3, 4]
    assert rrf[0].score == pytest.approx(1 / 62 + 1 / 61)
    linear = fuse([a, b], "linear")
    # min-max per ranking: a x 1, y 0.5, z 0; b y 1, w 0.5, x 0
    assert {c.chunk_id: round(c.score, 3) for c in linear} == {"x": 1.0, "y": 1.5, "w": 0.5, "z": 0.0}
    assert [c.chunk_id for c in linear] == ["y", "x", "w", "z"]
    # the second ranking at a quarter: x 1/61 + 0.25/63, y 1/62 + 0.25/61, z 1/63, w 0.25/62
    weighted = fuse([a, b], "rrf", [1.0, 0.25])
    assert [c.chunk_id for c in weighted] == ["x", "y", "z", "w"]
    assert weighted[0].score == pytest.approx(1 / 61 + 0.25 / 63)
    assert {c.chunk_id: round(c.score, 3) for c in fuse([a, b], "linear", [1.0, 0.25])} == \
        {"x": 1.0, "y": 0.75, "w": 0.125, "z": 0.0}
    with pytest.raises(ValueError):
        fuse([a, b], "rrf", [1.0])   # one weight per ranking


def test_the_rerank_stage_fuses_the_rerankers_rankings_with_the_pipelines_by_rank() -> None:
    from mhgraph.compose.fusion import by_ranks

    scored = _chunks(("x", 0.9), ("y", 0.8), ("z", 0.7), ("w", 0.6))
    candidates = _chunks(("x", 0.9), ("y", 0.8), ("z", 0.7))
    expansion = _chunks(("w", 3.0), ("z", 2.0))
    rerankers = {"first": [0.1, 0.9, 0.5, 0.2], "second": [0.3, 0.8, 0.1, 0.9]}   # y z w x, then w y x z
    kept = by_ranks(scored, rerankers, [candidates, expansion], [1.0, 1.0], share=0.5, k=5, keep=3)
    # the rerankers 0.25 each, the candidates and the expansion 0.25 each, 0.25 / (5 + rank)
    expected = {"x": 0.25 * (1 / 9 + 1 / 8 + 1 / 6), "y": 0.25 * (1 / 6 + 1 / 7 + 1 / 7),
                "z": 0.25 * (1 / 7 + 1 / 9 + 1 / 8 + 1 / 7), "w": 0.25 * (1 / 8 + 1 / 6 + 1 / 6)}
    ranked = sorted(expected, key=lambda c: -expected[c])[:3]
    assert [c.chunk_id for c in kept] == ranked and [c.rank for c in kept] == [1, 2, 3]
    assert kept[0].score == pytest.approx(expected[ranked[0]])
    assert ranked == ["z", "w", "y"]
    # the rerankers alone (share 1): y 1/6 + 1/7, w 1/8 + 1/6, z 1/7 + 1/9, x 1/9 + 1/8
    alone = by_ranks(scored, rerankers, [candidates, expansion], [1.0, 1.0], share=1.0, k=5, keep=4)
    assert [c.chunk_id for c in alone] == ["y", "w", "z", "x"]
    # parts weigh the rerankers unequally: the second alone (parts 0 and 1) ranks w y x z
    second = by_ranks(scored, rerankers, [candidates, expansion], [1.0, 1.0], share=1.0, k=5, keep=4, parts=[0, 1])
    assert [c.chunk_id for c in second] == ["w", "y", "x", "z"]
    # equal parts are the default
    assert by_ranks(scored, rerankers, [candidates, expansion], [1.0, 1.0], 0.5, 5, 3, parts=[2, 2]) == kept
    with pytest.raises(ValueError, match="1 parts for 2 rerankers"):
        by_ranks(scored, rerankers, [candidates], [1.0], 0.5, 5, 3, parts=[1])
    # the pipeline alone (share 0): z in both rankings, then x and w tied (first places), then y
    pipeline = by_ranks(scored, rerankers, [candidates, expansion], [1.0, 1.0], share=0.0, k=5, keep=4)
    assert [c.chunk_id for c in pipeline] == ["z", "x", "w", "y"]
    # a chunk the rerankers did not score is never kept, though a ranking holds it
    assert {c.chunk_id for c in by_ranks(scored[:2], {"first": [0.2, 0.1]}, [expansion], [1.0], 0.5, 5, 4)} == {"x", "y"}
    # nothing scored (a question without candidates): nothing kept
    assert by_ranks([], {}, [candidates], [1.0], 0.5, 5, 3) == []


def test_diversify_keeps_at_most_n_chunks_of_a_document_before_the_rest() -> None:
    from dataclasses import replace

    from mhgraph.compose.diversity import per_document

    ranked = [replace(c, document_id=d) for c, d in zip(
        _chunks(("a1", 9), ("a2", 8), ("a3", 7), ("b1", 6), ("none", 5), ("b2", 4), ("c1", 3)),
        ["A", "A", "A", "B", None, "B", "C"])]
    one = per_document(ranked, 1, 5)
    # A, B, the chunk with no document (its own), C; then the first held back, a2
    assert [c.chunk_id for c in one] == ["a1", "b1", "none", "c1", "a2"] and [c.rank for c in one] == [1, 2, 3, 4, 5]
    assert [c.score for c in one] == [9, 8, 6, 5, 3]   # the kept scores, highest first, in the new order
    assert [c.chunk_id for c in per_document(ranked, 2, 7)] == ["a1", "a2", "b1", "none", "b2", "c1", "a3"]
    assert [c.chunk_id for c in per_document(ranked, 3, 3)] == ["a1", "a2", "a3"]   # within the limit: unchanged
    assert parse_stages("diversify=2").describe().endswith("rerank=none diversify=2")
    assert "diversify" not in parse_stages("diversify=none").describe()


def test_balance_takes_each_source_in_turn() -> None:
    from dataclasses import replace

    from mhgraph.compose.diversity import in_turn

    ranked = [replace(c, source=s, document_id=d) for c, s, d in zip(
        _chunks(("a1", 9), ("a2", 8), ("b1", 7), ("a3", 6), ("x1", 5), ("b2", 4), ("c1", 3), ("x2", 2)),
        ["A", "A", "B", "A", None, "B", "C", None], ["1", "2", "3", "1", "4", "3", "5", "6"])]
    # sources in the order of their best chunk (A, B, the chunks without one, C), each in its order
    turns = in_turn(ranked, "source", 8)
    assert [c.chunk_id for c in turns] == ["a1", "b1", "x1", "c1", "a2", "b2", "x2", "a3"]
    assert [c.rank for c in turns] == list(range(1, 9))
    # the scores given out again in the new order, so a result's final ranking (by score) keeps it
    assert [c.score for c in turns] == [9, 8, 7, 6, 5, 4, 3, 2]
    assert [c.chunk_id for c in in_turn(ranked, "source", 3)] == ["a1", "b1", "x1"]
    # a chunk moved into the kept few brings its score; the kept few are scored among themselves
    assert [(c.chunk_id, c.score) for c in in_turn(ranked, "source", 4)] == [("a1", 9), ("b1", 7), ("x1", 5), ("c1", 3)]
    # by document: documents 1, 2, 3, 4, 5, 6 once each, then the second chunks of 1 and 3
    assert [c.chunk_id for c in in_turn(ranked, "document", 8)] == ["a1", "a2", "b1", "x1", "c1", "x2", "a3", "b2"]
    # without the field, one group: the order stays
    flat = [replace(c, source=None) for c in ranked]
    assert [c.chunk_id for c in in_turn(flat, "source", 8)] == [c.chunk_id for c in ranked]
    assert in_turn(ranked, "source", 0) == [] and in_turn([], "source", 5) == []
    assert parse_stages("balance=source").describe().endswith("rerank=none balance=source")
    assert parse_stages("diversify=1 balance=document").describe().endswith("balance=document diversify=1")
    assert "balance" not in parse_stages("balance=none").describe()


def test_share_is_written_after_the_filter_only_when_set() -> None:
    stages = parse_stages("candidates=vector share=source filter=rules")
    assert stages.share == "source" and stages.describe().startswith("filter=rules share=source candidates=vector")
    assert parse_stages(stages.describe()) == stages
    assert "share" not in parse_stages("filter=rules share=none").describe()


def test_dropped_filter_words_are_written_with_the_filter_only_when_set() -> None:
    stages = parse_stages("candidates=hybrid:200 filter=rules:drop-words share=source")
    assert stages.filter == "rules" and stages.filter_words == "drop"
    assert stages.describe().startswith("filter=rules:drop-words share=source candidates=hybrid:200 expand=none")
    assert parse_stages(stages.describe()) == stages
    assert parse_stages("filter=rules").filter_words == "keep" and ":" not in parse_stages("filter=rules").describe()


def test_hybrid_depth_is_written_with_the_candidates() -> None:
    stages = parse_stages("filter=rules candidates=hybrid:200")
    assert stages.candidates == "hybrid" and stages.depth == 200
    assert stages.describe().startswith("filter=rules candidates=hybrid:200 expand=none")
    assert parse_stages(stages.describe()) == stages
    assert parse_stages("candidates=hybrid").depth is None and ":" not in parse_stages("candidates=hybrid").describe()


def test_the_chunks_a_reranker_scores_are_written_with_it() -> None:
    stages = parse_stages("rerank=kfold:models/reranker-onnx:30 filter=rules")
    assert stages.rerank == "kfold:models/reranker-onnx" and stages.rerank_k == 30
    assert stages.describe().endswith("rerank=kfold:models/reranker-onnx:30")
    assert parse_stages(stages.describe()) == stages
    # a reranker's own colons are its name's: only a last part of digits is N
    assert parse_stages("rerank=bi-encoder:bge-small-en-v1.5").rerank_k is None
    assert parse_stages("rerank=kfold:models/r2").rerank == "kfold:models/r2"
    assert parse_stages("rerank=kfold:./30").rerank == "kfold:./30"
    assert parse_stages("rerank=nanoranker:030").describe().endswith("rerank=nanoranker:30")
    assert parse_stages("rerank=nanoranker:\u0663").rerank == "nanoranker:\u0663"    # ASCII digits only


# -- on the real server -----------------------------------------------------------------------
from tests.conftest import SAMPLE, eval_run_dir, run_cli

QUESTION = "Which club did Tomás Ferreira leave for Kingsbridge Rovers, and why did that club sack its manager?"


def _retriever(driver, settings, embedder, corpus: str | None, method: str, options=None):
    from mhgraph.graph.context import GraphContext
    from mhgraph.retrieval.registry import build_retriever

    graph = GraphContext.open(driver, settings.neo4j_database, corpus)
    return build_retriever(method, graph, settings, options, embedder=embedder)


@pytest.fixture
def sample_graph(empty_graph, settings, embedder):
    from mhgraph.ingest.pipeline import ingest_corpus

    ingest_corpus(SAMPLE / "corpus.json", settings, empty_graph, embedder=embedder, progress=False)
    return empty_graph


def test_one_stage_pipelines_are_their_methods(sample_graph, settings, embedder) -> None:
    from mhgraph.compose.diagnostics import StageTrace
    from mhgraph.retrieval.compose import ComposeOptions
    from mhgraph.retrieval.metarag import MetaRAGOptions

    def ids(result):
        return [c.chunk_id for c in result.hops[0].chunks]

    vector = _retriever(sample_graph, settings, embedder, None, "vector").search(QUESTION, top_k=5)
    alone = _retriever(sample_graph, settings, embedder, None, "compose",
                       ComposeOptions(stages="candidates=vector")).search(QUESTION, top_k=5)
    assert ids(alone) == ids(vector) and [c.rank for c in alone.hops[0].chunks] == [1, 2, 3, 4, 5]
    trace = alone.diagnostic(StageTrace)
    assert [s["stage"] for s in trace.stages] == ["candidates", "fusion"]
    assert trace.stages[1]["chunks"] == ids(vector) and set(alone.phases) == {"candidates", "fusion"}
    # a filter stage is metarag's filtered search with the same extractor and candidates
    filtered = _retriever(sample_graph, settings, embedder, None, "compose",
                          ComposeOptions(stages="filter=rules candidates=vector", candidate_k=8))
    metarag = _retriever(sample_graph, settings, embedder, None, "metarag",
                         MetaRAGOptions(filter_extractor="rules", candidates=8))
    question = "What did Circuit Weekly report about the Veltrix recall?"
    composed, searched = filtered.search(question, top_k=4), metarag.search(question, top_k=4)
    assert ids(composed) == ids(searched)
    # and its hop shows the filter it searched under, as metarag's does
    assert composed.hops[0].filters == searched.hops[0].filters and searched.hops[0].filters
    with pytest.raises(MhgraphError, match="takes vector or hybrid candidates, not bm25"):
        _retriever(sample_graph, settings, embedder, None, "compose",
                   ComposeOptions(stages="filter=rules candidates=bm25"))


def test_a_treehop_expansion_names_its_model_in_the_trace(sample_graph, settings, embedder) -> None:
    from mhgraph.retrieval.compose import ComposeOptions
    from mhgraph.treehop.diagnostics import TreeHopTree

    result = _retriever(sample_graph, settings, embedder, None, "compose",
                        ComposeOptions(stages="candidates=vector expand=treehop")).search(QUESTION, top_k=3)
    tree = result.diagnostic(TreeHopTree)
    assert tree.model and tree.lines(result, 80)[0].startswith(f"model: {tree.model}; branches per hop: ")
    assert "None" not in tree.lines(result, 80)[0]


def test_expansion_joins_and_the_reranker_orders_the_end(sample_graph, settings, embedder) -> None:
    from mhgraph.claims.build import build_claims
    from mhgraph.claims.extract import OfflineClaimExtractor
    from mhgraph.compose.diagnostics import StageTrace
    from mhgraph.rerank.models import PACKAGED, load_reranker
    from mhgraph.retrieval.compose import ComposeOptions
    from mhgraph.traversal.diagnostics import PPRWalk

    with pytest.raises(MhgraphError, match=r"^corpus 'sample' has no claims: run 'mhgraph claims build --corpus sample'"):
        _retriever(sample_graph, settings, embedder, None, "compose", ComposeOptions(stages="expand=ppr"))
    build_claims(sample_graph, settings.neo4j_database, "sample", OfflineClaimExtractor(), embedder, progress=False)
    options = ComposeOptions(stages=f"candidates=bm25 expand=ppr fuse=rrf rerank={PACKAGED}", candidate_k=6,
                             expand_k=10, rerank_k=9, rerank_weight=1.0)
    result = _retriever(sample_graph, settings, embedder, None, "compose", options).search(QUESTION, top_k=3)
    trace = {s["stage"]: s for s in result.diagnostic(StageTrace).stages}
    assert list(trace) == ["candidates", "expand:ppr", "expanded", "fusion", "rerank"]
    assert len(trace["candidates"]["chunks"]) == 6 and len(trace["expand:ppr"]["chunks"]) == 10
    pool = set(trace["candidates"]["chunks"]) | set(trace["expand:ppr"]["chunks"])
    assert set(trace["expanded"]["chunks"]) == pool and len(pool) >= 10    # the walk reaches past the candidates
    assert len(trace["fusion"]["chunks"]) == 9 and set(trace["fusion"]["chunks"]) <= pool
    # the reranker saw the 9 fused chunks and kept its own best 3
    final = [c.chunk_id for c in result.hops[0].chunks]
    assert trace["rerank"]["chunks"] == final and len(final) == 3 and set(final) <= set(trace["fusion"]["chunks"])
    fused = trace["fusion"]["chunks"]
    rows = sample_graph.execute_query("UNWIND $ids AS id MATCH (c:Chunk {id: id}) RETURN c.text AS text", ids=fused,
                                      database_=settings.neo4j_database).records
    scores = load_reranker(PACKAGED).score(QUESTION, [r["text"] for r in rows])
    assert final == [cid for _, cid in sorted(zip(scores, fused), key=lambda p: -p[0])][:3]
    # the trace keeps what the reranker ordered by: each chunk it scored, its fused score and the reranker's
    scored = trace["rerank"]["scores"]
    assert scored["chunks"] == fused and len(scored["search"]) == 9
    assert scored["search"] == sorted(scored["search"], reverse=True) and scored["search"][0] > 0
    assert list(scored["rerankers"]) == [load_reranker(PACKAGED).name]
    assert scored["rerankers"][load_reranker(PACKAGED).name] == pytest.approx(scores, abs=1e-4)
    # the walk was seeded by the candidates (6 chunks, min-max: one at 0), not its own vector search
    assert result.diagnostic(PPRWalk).seeded_chunks == 5
    # and by the question's sources and dates, read by the rules (the line has no filter); it names none
    assert result.diagnostic(PPRWalk).metadata == {"filter": {}, "seeded": {}}
    assert result.params["stages"] == f"filter=none candidates=bm25 expand=ppr fuse=rrf rerank={PACKAGED}"
    # no weight given: the one the packaged reranker records (0.5, fused with the pipeline's score)
    unweighted = _retriever(sample_graph, settings, embedder, None, "compose",
                            ComposeOptions(stages=f"candidates=bm25 rerank={PACKAGED}"))
    assert unweighted.params["rerank_weight"] == 0.5 and unweighted.params["rerank_k"] == 20
    # without an expansion the candidates are all a reranker scores: told N, it reads N of them;
    # the default N (20) does not raise a smaller candidate_k
    told = _retriever(sample_graph, settings, embedder, None, "compose",
                      ComposeOptions(stages=f"candidates=bm25 rerank={PACKAGED}:9", candidate_k=6))
    assert told.params["candidate_k"] == 9
    assert _retriever(sample_graph, settings, embedder, None, "compose",       # rerank_k set, not in the line
                      ComposeOptions(stages=f"candidates=bm25 rerank={PACKAGED}", candidate_k=6, rerank_k=9)).params[
        "candidate_k"] == 9
    assert {s["stage"]: s for s in told.search(QUESTION, top_k=3).diagnostic(StageTrace).stages}[
        "candidates"]["detail"] == "bm25, 9 chunks"
    assert _retriever(sample_graph, settings, embedder, None, "compose",
                      ComposeOptions(stages=f"candidates=bm25 rerank={PACKAGED}", candidate_k=6)).params[
        "candidate_k"] == 6
    # rerank=RERANKER:N is rerank_k N, written in the line
    lined = ComposeOptions(stages=f"candidates=bm25 expand=ppr fuse=rrf rerank={PACKAGED}:9", candidate_k=6,
                           expand_k=10, rerank_weight=1.0)
    again = _retriever(sample_graph, settings, embedder, None, "compose", lined).search(QUESTION, top_k=3)
    assert [c.chunk_id for c in again.hops[0].chunks] == final and again.params["rerank_k"] == 9
    assert {s["stage"]: s for s in again.diagnostic(StageTrace).stages}["rerank"]["detail"].endswith(", 9 -> 3")
    assert again.params["stages"].endswith(f"rerank={PACKAGED}:9")
    # fused by ranks: the reranker's ranking of the 9 with the candidates' and the walk's, k 5
    from mhgraph.compose.fusion import by_ranks

    ranked = _retriever(sample_graph, settings, embedder, None, "compose",
                        lined.model_copy(update={"rerank_fusion": "ranks", "rerank_weight": 0.5})).search(QUESTION,
                                                                                                           top_k=3)
    steps = {s["stage"]: s for s in ranked.diagnostic(StageTrace).stages}
    scored = steps["rerank"]["scores"]
    expected = by_ranks(_chunks(*zip(scored["chunks"], scored["search"])), scored["rerankers"],
                        [_chunks(*((c, 0.0) for c in steps[name]["chunks"])) for name in ("candidates", "expand:ppr")],
                        [1.0, 1.0], share=0.5, k=5, keep=3)
    assert [c.chunk_id for c in ranked.hops[0].chunks] == [c.chunk_id for c in expected]
    assert steps["rerank"]["detail"].endswith(", 9 -> 3, fused by ranks (k 5)")
    assert (ranked.params["rerank_fusion"], ranked.params["rerank_rrf_k"]) == ("ranks", 5)
    assert "rerank_fusion" not in again.params         # the default, scores, is not written
    with pytest.raises(MhgraphError, match=rf"^stage 'rerank': the line says {PACKAGED}:9, but rerank_k 12 is "
                                           rf"configured: write rerank={PACKAGED}:12, or unset it$"):
        _retriever(sample_graph, settings, embedder, None, "compose", lined.model_copy(update={"rerank_k": 12}))


def test_a_reranker_trained_on_another_corpus_is_told_so_in_one_line(sample_graph, settings, embedder) -> None:
    """The packaged cross-encoder learned from MultiHop-RAG's questions: on the sample corpus the
    rerank stage still runs, and says which command trains one for this corpus."""
    from mhgraph.retrieval.compose import ComposeOptions

    with pytest.warns(UserWarning, match=r"^reranker multihop-rag-minilm learned from corpus 'multihop-rag', not "
                                         r"'sample': .+ \(mhgraph reranker train --corpus sample --questions FILE, "
                                         r"then name its folder\)$"):
        composed = _retriever(sample_graph, settings, embedder, None, "compose",
                              ComposeOptions(stages="candidates=vector rerank=multihop-rag-minilm:10"))
    assert len(composed.search(QUESTION, top_k=3).hops[0].chunks) == 3


def test_the_training_free_preset_rescores_its_candidates_by_their_best_sentence(sample_graph, settings,
                                                                                 embedder) -> None:
    from mhgraph.compose.diagnostics import StageTrace
    from mhgraph.rerank.models import load_reranker
    from mhgraph.retrieval.compose import ComposeOptions

    preset = _retriever(sample_graph, settings, embedder, None, "compose", ComposeOptions(stages="training-free"))
    # the reranker's own weight (its record's k-fold choice), 50 candidates, all scored
    assert preset.params["rerank_weight"] == 0.7 and preset.params["rerank_k"] == 50
    assert preset.params["candidate_k"] == 50
    assert preset.params["reranker"] == "sentences:all-MiniLM-L6-v2"
    result = preset.search(QUESTION, top_k=3)
    trace = {s["stage"]: s for s in result.diagnostic(StageTrace).stages}
    assert list(trace) == ["candidates", "fusion", "rerank"]
    assert trace["rerank"]["detail"].startswith("sentences:all-MiniLM-L6-v2")
    # at weight 1 the order is the reranker's alone: its best 3 of the fused chunks
    alone = _retriever(sample_graph, settings, embedder, None, "compose",
                       ComposeOptions(stages="training-free", rerank_weight=1.0)).search(QUESTION, top_k=3)
    fused = {s["stage"]: s for s in alone.diagnostic(StageTrace).stages}["fusion"]["chunks"]
    rows = sample_graph.execute_query("MATCH (c:Chunk) WHERE c.id IN $ids RETURN c.id AS id, c.text AS text",
                                      ids=fused, database_=settings.neo4j_database).records
    text = {r["id"]: r["text"] for r in rows}
    scores = load_reranker("sentences:all-MiniLM-L6-v2").score(QUESTION, [text[cid] for cid in fused])
    final = [c.chunk_id for c in alone.hops[0].chunks]
    assert final == [cid for _, cid in sorted(zip(scores, fused), key=lambda p: -p[0])][:3]
    assert {c.chunk_id for c in result.hops[0].chunks} <= set(fused)


def test_an_expansion_reads_the_question_metadata_as_the_line_filter_does(settings) -> None:
    from mhgraph.retrieval import registry
    from mhgraph.retrieval.compose import _expansion_options

    for line, extractor in (("filter=llm candidates=hybrid expand=ppr", "llm"),
                            ("filter=gold candidates=hybrid expand=ppr", "gold"),
                            ("candidates=hybrid expand=ppr", "rules")):
        assert _expansion_options(settings, "ppr", parse_stages(line)).filter_extractor == extractor, line
    # an expansion without a filter extractor keeps its configured options
    assert _expansion_options(settings, "bm25", parse_stages("filter=llm expand=bm25")) == \
        registry.options_for(settings, "bm25")


def test_expand_weight_zero_keeps_the_candidates_order_ahead(sample_graph, settings, embedder) -> None:
    from mhgraph.compose.diagnostics import StageTrace
    from mhgraph.retrieval.compose import ComposeOptions

    def retriever(weight: float):
        options = ComposeOptions(stages="candidates=vector expand=bm25", candidate_k=4, expand_k=8,
                                 expand_weight=weight)
        return _retriever(sample_graph, settings, embedder, None, "compose", options)

    def stages(result):
        return {s["stage"]: s["chunks"] for s in result.diagnostic(StageTrace).stages}

    zero = retriever(0.0).search(QUESTION, top_k=8)
    trace = stages(zero)
    extra = [c for c in trace["expand:bm25"] if c not in trace["candidates"]]
    # the candidates in their own order, then what only BM25 found, in BM25's order
    assert [c.chunk_id for c in zero.hops[0].chunks] == (trace["candidates"] + extra)[:8]
    assert zero.params["expand_weight"] == 0.0
    even = retriever(1.0).search(QUESTION, top_k=8)
    assert stages(even)["candidates"] == trace["candidates"] and "expand_weight" not in even.params
    assert [c.chunk_id for c in even.hops[0].chunks] != [c.chunk_id for c in zero.hops[0].chunks]
    # the same weight written in the stages line: the same order, and the line says it (a named
    # pipeline carries it); the option, overridden, is not recorded
    lined = _retriever(sample_graph, settings, embedder, None, "compose",
                       ComposeOptions(stages="candidates=vector expand=bm25:0", candidate_k=4, expand_k=8,
                                      expand_weight=0.5)).search(QUESTION, top_k=8)
    assert [c.chunk_id for c in lined.hops[0].chunks] == [c.chunk_id for c in zero.hops[0].chunks]
    assert lined.params["stages"].startswith("filter=none candidates=vector expand=bm25:0 ")
    assert "expand_weight" not in lined.params


def test_diversify_stage_spreads_the_kept_chunks_over_documents(sample_graph, settings, embedder) -> None:
    from mhgraph.compose.diagnostics import StageTrace
    from mhgraph.rerank.models import PACKAGED
    from mhgraph.retrieval.compose import ComposeOptions

    def documents(chunks):
        return [c.document_id for c in chunks]

    plain = _retriever(sample_graph, settings, embedder, None, "compose",
                       ComposeOptions(stages="candidates=vector", candidate_k=30)).search(QUESTION, top_k=30)
    ranked = plain.hops[0].chunks
    assert len(set(documents(ranked[:6]))) < 6     # the plain order repeats documents early
    spread = _retriever(sample_graph, settings, embedder, None, "compose",
                        ComposeOptions(stages="candidates=vector diversify=1", candidate_k=30)).search(QUESTION, top_k=6)
    kept = spread.hops[0].chunks
    # one chunk per document, the documents in the order of their best chunk
    first_of = list(dict.fromkeys(documents(ranked)))
    assert documents(kept) == first_of[:6] and len(set(documents(kept))) == 6
    assert [c.chunk_id for c in kept] == [next(c.chunk_id for c in ranked if c.document_id == d) for d in first_of[:6]]
    assert [c.chunk_id for c in spread.final_ranking()] == [c.chunk_id for c in kept]
    trace = spread.diagnostic(StageTrace)
    assert [s["stage"] for s in trace.stages] == ["candidates", "fusion", "diversify"]
    assert len(trace.stages[1]["chunks"]) == 30 and trace.stages[2]["chunks"] == [c.chunk_id for c in kept]
    assert spread.params["stages"].endswith("rerank=none diversify=1")
    # after a reranker: it orders all it scored, and the stage keeps its best of each document
    options = {"candidate_k": 12, "rerank_k": 12, "rerank_weight": 1.0}
    reranked = _retriever(sample_graph, settings, embedder, None, "compose",
                          ComposeOptions(stages=f"candidates=vector rerank={PACKAGED}", **options)).search(QUESTION,
                                                                                                          top_k=12)
    both = _retriever(sample_graph, settings, embedder, None, "compose",
                      ComposeOptions(stages=f"candidates=vector rerank={PACKAGED} diversify=1", **options))
    kept = both.search(QUESTION, top_k=3).hops[0].chunks
    order = reranked.hops[0].chunks
    best = list(dict.fromkeys(documents(order)))[:3]
    assert [c.chunk_id for c in kept] == [next(c.chunk_id for c in order if c.document_id == d) for d in best]


def test_balance_stage_takes_each_source_the_filter_names_in_turn(sample_graph, settings, embedder) -> None:
    from mhgraph.compose.diagnostics import StageTrace
    from mhgraph.retrieval.compose import ComposeOptions

    two = "Did The Meridian Post and Courtside Daily both report on Tomás Ferreira and Kingsbridge Rovers?"

    def search(stages: str, question: str, top_k: int):
        return _retriever(sample_graph, settings, embedder, None, "compose",
                          ComposeOptions(stages=stages, candidate_k=30)).search(question, top_k=top_k)

    ranked = search("filter=rules candidates=hybrid", two, 30).hops[0].chunks
    sources = list(dict.fromkeys(c.source for c in ranked))
    assert sorted(sources) == ["Courtside Daily", "The Meridian Post"]     # the filter's two sources
    result = search("filter=rules candidates=hybrid balance=source", two, 6)
    kept = result.hops[0].chunks
    # the best chunk of each source in turn, the sources in the order of their best chunk
    by_source = {s: [c.chunk_id for c in ranked if c.source == s] for s in sources}
    turns = [by_source[s][i] for i in range(3) for s in sources]
    assert [c.chunk_id for c in kept] == turns != [c.chunk_id for c in ranked[:6]]   # the search's order differs
    # what scoring and the CLI read: the final ranking, by score, is the balanced order
    assert [c.chunk_id for c in result.final_ranking()] == [c.chunk_id for c in kept]
    trace = result.diagnostic(StageTrace)
    assert [s["stage"] for s in trace.stages] == ["candidates", "fusion", "balance"]
    assert len(trace.stages[1]["chunks"]) == len(ranked) and trace.stages[2]["chunks"] == [c.chunk_id for c in kept]
    assert result.params["stages"].endswith("rerank=none balance=source")
    # a question whose filter names no source keeps the search's order
    plain = search("filter=rules candidates=hybrid", QUESTION, 6).hops[0].chunks
    kept = search("filter=rules candidates=hybrid balance=source", QUESTION, 6).hops[0].chunks
    assert len({c.source for c in plain}) >= 2 and [c.chunk_id for c in kept] == [c.chunk_id for c in plain]


def test_share_stage_searches_each_source_the_filter_names_apart(sample_graph, settings, embedder) -> None:
    from mhgraph.compose.diagnostics import StageTrace
    from mhgraph.retrieval.compose import ComposeOptions
    from mhgraph.retrieval.metarag import MetaRAGOptions

    two = "Did The Meridian Post and Courtside Daily both report on Tomás Ferreira and Kingsbridge Rovers?"

    def search(method: str, options, question: str = two):
        return _retriever(sample_graph, settings, embedder, None, method, options).search(question, top_k=6)

    shared = search("compose", ComposeOptions(stages="filter=rules share=source candidates=hybrid", candidate_k=6))
    # the candidates stage is metarag's per-source search: 3 chunks of each source, merged by score
    alone = search("metarag", MetaRAGOptions(search="hybrid", candidates=6, per_source=True))
    assert [c.chunk_id for c in shared.hops[0].chunks] == [c.chunk_id for c in alone.hops[0].chunks]
    assert sorted(c.source for c in shared.hops[0].chunks) == ["Courtside Daily"] * 3 + ["The Meridian Post"] * 3
    one = search("compose", ComposeOptions(stages="filter=rules candidates=hybrid", candidate_k=6))
    assert [c.source for c in one.hops[0].chunks].count("Courtside Daily") != 3   # one search shares otherwise
    trace = shared.diagnostic(StageTrace)
    assert trace.stages[0]["detail"] == "hybrid inside the rules filter, each source it names apart, 6 chunks"
    assert shared.params["candidates"]["per_source"] is True and "per_source" not in one.params["candidates"]
    assert shared.params["stages"].startswith("filter=rules share=source candidates=hybrid")


def test_dropped_filter_words_reach_the_candidates_search(sample_graph, settings, embedder) -> None:
    """filter=EXTRACTOR:drop-words is metarag's filter_words drop: the BM25 query without the words
    naming the filter; metarag's filter_words set to drop apart from a line that keeps them is a
    one-line error."""
    from dataclasses import replace

    from mhgraph.compose.diagnostics import StageTrace
    from mhgraph.errors import MhgraphError
    from mhgraph.filters.diagnostics import FilterExtraction
    from mhgraph.options import OptionSources
    from mhgraph.retrieval.compose import ComposeOptions
    from mhgraph.retrieval.metarag import MetaRAGOptions

    # Global Finance Wire's pitch article writes its own outlet's name: the name in the BM25 query favours it
    question = ("What did Global Finance Wire report about the Quantum Ledger pitch and Northwind Tech Review about "
                "Cobaltine?")

    def search(method: str, options, config=settings):
        return _retriever(sample_graph, config, embedder, None, method, options).search(question, top_k=6)

    def ranked(result):
        return [(c.chunk_id, round(c.score, 6)) for c in result.hops[0].chunks]

    keywords = "What did report about the Quantum Ledger pitch and about Cobaltine?"
    runs = {}
    for share in ("", " share=source"):   # one search inside the filter, and each source apart
        dropped = search("compose", ComposeOptions(stages=f"filter=rules:drop-words{share} candidates=hybrid",
                                                   candidate_k=6))
        alone = search("metarag", MetaRAGOptions(search="hybrid", candidates=6, filter_words="drop",
                                                 per_source=bool(share)))
        kept = search("compose", ComposeOptions(stages=f"filter=rules{share} candidates=hybrid", candidate_k=6))
        assert ranked(dropped) == ranked(alone) and ranked(dropped) != ranked(kept), share   # the words left
        found = dropped.diagnostic(FilterExtraction)
        assert found.keywords == keywords and found.to_json()["keywords"] == keywords
        assert f"keyword query without the filter's words: {keywords}" in found.lines(dropped, 100)
        assert kept.diagnostic(FilterExtraction).keywords is None and "keywords" not in \
            kept.diagnostic(FilterExtraction).to_json()
        runs[share] = dropped, kept
    dropped, kept = runs[""]
    assert dropped.params["candidates"]["filter_words"] == "drop" and "filter_words" not in kept.params["candidates"]
    assert dropped.diagnostic(StageTrace).stages[0]["detail"] == (
        "hybrid inside the rules filter, its words left out of the BM25 query, 6 chunks")
    configured = replace(settings, option_sources=OptionSources({"metarag": {"filter_words": "drop"}}, {}, {}))
    with pytest.raises(MhgraphError, match=r"^stage 'filter': the line keeps the filter's words in the BM25 query, "
                                           r"but metarag's filter_words is configured as drop: write "
                                           r"filter=rules:drop-words, or unset it$"):
        search("compose", ComposeOptions(stages="filter=rules candidates=hybrid"), config=configured)
    # vector candidates have no BM25 query: the setting has nothing to do there, as a hybrid depth has not
    assert search("compose", ComposeOptions(stages="filter=rules candidates=vector", candidate_k=6),
                  config=configured).hops[0].chunks


def test_hybrid_depth_reaches_the_candidates_search(sample_graph, settings, embedder) -> None:
    """candidates=hybrid:N is metarag's hybrid_depth inside a filter, and hybrid's depth without one;
    a depth configured apart from the line that differs from it is a one-line error."""
    from dataclasses import replace

    from mhgraph.compose.diagnostics import StageTrace
    from mhgraph.errors import MhgraphError
    from mhgraph.options import OptionSources
    from mhgraph.retrieval.compose import ComposeOptions
    from mhgraph.retrieval.hybrid import HybridOptions
    from mhgraph.retrieval.metarag import MetaRAGOptions

    two = "Did The Meridian Post and Courtside Daily both report on Tomás Ferreira and Kingsbridge Rovers?"

    def search(method: str, options, question: str = two, k: int = 6, config=settings):
        return _retriever(sample_graph, config, embedder, None, method, options).search(question, top_k=k)

    def ranked(result):
        return [(c.chunk_id, round(c.score, 6)) for c in result.hops[0].chunks]

    deep = search("compose", ComposeOptions(stages="filter=rules share=source candidates=hybrid:12", candidate_k=6))
    alone = search("metarag", MetaRAGOptions(search="hybrid", candidates=6, per_source=True, hybrid_depth=12))
    shallow = search("compose", ComposeOptions(stages="filter=rules share=source candidates=hybrid", candidate_k=6))
    assert ranked(deep) == ranked(alone) and ranked(deep) != ranked(shallow)   # the depth reached the query
    assert deep.params["candidates"]["hybrid_depth"] == 12
    assert deep.diagnostic(StageTrace).stages[0]["detail"] == (
        "hybrid (fused 12 deep) inside the rules filter, each source it names apart, 6 chunks")
    question = "Did the streaming service raise prices before the patent verdict?"
    flat = search("compose", ComposeOptions(stages="candidates=hybrid:14", candidate_k=4), question, 4)
    assert ranked(flat) == ranked(search("hybrid", HybridOptions(depth=14), question, 4))
    assert flat.params["candidates"]["depth"] == 14
    # --hybrid-depth 100 beside a line that says another depth (or none): which runs would be unclear
    configured = replace(settings, option_sources=OptionSources({"metarag": {"hybrid_depth": 100}}, {}, {}))
    with pytest.raises(MhgraphError, match=r"^stage 'candidates': the line says hybrid:12, but a hybrid depth of "
                                           r"100 is configured: write candidates=hybrid:100, or unset it$"):
        search("compose", ComposeOptions(stages="filter=rules share=source candidates=hybrid:12"), config=configured)


def test_filter_on_a_flat_corpus_is_skipped_with_a_note(empty_graph, settings, embedder) -> None:
    from mhgraph.compose.diagnostics import StageTrace
    from mhgraph.ingest.pipeline import ingest_corpus
    from mhgraph.retrieval.compose import ComposeOptions

    ingest_corpus(SAMPLE / "corpus.txt", settings, empty_graph, embedder=embedder, progress=False)
    retriever = _retriever(empty_graph, settings, embedder, None, "compose",
                           ComposeOptions(stages="filter=rules candidates=vector"))
    result = retriever.search(QUESTION, top_k=4)
    trace = result.diagnostic(StageTrace)
    assert trace.note == "filter skipped: the corpus's chunks have no source and no date"
    assert trace.stages[0]["detail"] == "vector, 30 chunks" and len(result.hops[0].chunks) == 4


def test_compose_eval_reports_where_gold_is_lost(settings, empty_graph, tmp_path) -> None:
    env = {"MHGRAPH_CACHE_DIR": str(tmp_path / "cache"), "MHGRAPH_LLM_BACKEND": "none"}
    assert run_cli(settings, "ingest", "--no-progress", "--claims", env=env).returncode == 0
    result = run_cli(settings, "eval", "--sample", "-m", "compose", "--stages", "candidates=vector expand=ppr,bm25",
                     "--compose-candidate-k", "5", "-k", "4", "--limit", "6", "--no-trace", "--no-progress",
                     "--runs-dir", str(tmp_path / "runs"), env=env)
    assert result.returncode == 0, result.stderr
    run_dir = eval_run_dir(result.stdout)
    report = (run_dir / "report.md").read_text()
    summary = json.loads((run_dir / "report.json").read_text())
    assert "## Pipeline stages: where gold is lost" in report
    assert "## Graph traversal (personalized PageRank)" in report       # the stage's own record
    rows = {r["stage"]: r for r in summary["compose"]["stages"]}
    assert list(rows) == ["candidates", "expand:ppr", "expand:bm25", "expanded", "fusion"]
    # the pool holds every stage's chunks; fusion keeps the best 4 of it
    assert rows["expanded"]["gold_recall"] >= max(rows[s]["gold_recall"] for s in ("candidates", "expand:ppr",
                                                                                     "expand:bm25"))
    assert rows["fusion"]["gold_recall"] <= rows["expanded"]["gold_recall"] and rows["fusion"]["chunks_mean"] == 4
    assert re.search(r"\| candidates \| vector, 5 chunks \| [\d.]+ \| 5\.0 \| [\d.]+ \| [\d.]+ \|", report)

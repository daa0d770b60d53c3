"""Multi-Meta-RAG against the real server: filtered search in both Cypher forms, fallbacks,
rerankers (loading paths and order), and an end-to-end eval on the bundled corpus."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from dataclasses import replace
from datetime import date, datetime, timezone

import numpy as np
import pytest

from mhgraph.filters.extractors import Extraction, RulesExtractor, build_extractor
from mhgraph.filters.model import MetadataFilter
from mhgraph.graph.capabilities import detect
from mhgraph.ingest.pipeline import ingest_corpus
from mhgraph.rerank.base import rerank
from mhgraph.rerank.models import PACKAGED, CrossEncoderReranker, FlagCrossEncoderReranker, load_reranker
from mhgraph.rerank.onnx import OnnxCrossEncoderReranker
from mhgraph.retrieval import build_retriever
from mhgraph.types import RetrievedChunk
from mhgraph.retrieval.metarag import MetaRAGRetriever
from mhgraph.filters.diagnostics import FilterExtraction
from tests.conftest import REPO, SAMPLE, run_cli, wipe

BENCHMARK = REPO.parent / "shared" / "data" / "multihop-rag"
# A slice of the benchmark corpus small enough to ingest in a test: six outlets, 61 articles
NEWS_SOURCES = {"Fortune", "The Age", "Wired", "The New York Times", "Mashable", "Seeking Alpha"}


@pytest.fixture(scope="module")
def graph(driver, settings, server, embedder, tmp_path_factory):
    """The bundled sample (corpus 'sample') and, where the benchmark is beside the checkout, the
    articles of NEWS_SOURCES (corpus 'news')."""
    wipe(driver, settings.neo4j_database)
    ingest_corpus(SAMPLE / "corpus.json", settings, driver, embedder=embedder, progress=False)
    if (BENCHMARK / "corpus.json").is_file():
        articles = [a for a in json.loads((BENCHMARK / "corpus.json").read_text()) if a["source"] in NEWS_SOURCES]
        path = tmp_path_factory.mktemp("news") / "news.json"
        path.write_text(json.dumps(articles))
        ingest_corpus(path, replace(settings, corpus="news"), driver, embedder=embedder, progress=False)
    return driver


class FixedFilter:
    """An extractor that always returns one filter (tests the search, not the extraction)."""

    name = "fixed"

    def __init__(self, found: MetadataFilter) -> None:
        self.found = found

    def extract(self, question: str) -> Extraction:
        return Extraction(self.found)


def retriever(driver, settings, embedder, extractor, mode="index", corpus="sample", **kw) -> MetaRAGRetriever:
    return MetaRAGRetriever(driver, embedder, extractor, detect(driver, settings.neo4j_database),
                            settings.neo4j_database, corpus=corpus, search_ratio=10, mode=mode, **kw)


def exact_ranking(driver, embedder, question: str, found: MetadataFilter, corpus: str) -> list[str]:
    """The admitted chunks ordered by cosine, computed here from the stored vectors."""
    rows, _, _ = driver.execute_query("MATCH (c:Chunk) WHERE c.corpus = $corpus RETURN c.id AS id, c.source AS s, "
                                      "c.published_at AS p, c.embedding AS e", corpus=corpus)
    q = embedder.embed_query(question)
    admitted = [r for r in rows if found.admits(r["s"], r["p"].to_native())]
    return [r["id"] for r in sorted(admitted, key=lambda r: (-float(np.dot(q, r["e"])), r["id"]))]


FILTERS = [
    MetadataFilter(("Circuit Weekly", "Global Finance Wire")),
    MetadataFilter(days=(date(2023, 10, 3), date(2023, 11, 6), date(2023, 12, 12))),
    MetadataFilter(("Harbor Ledger", "Circuit Weekly"), day_from=date(2023, 10, 1), day_to=date(2023, 11, 30)),
    MetadataFilter(("Northwind Tech Review",), day_to=date(2023, 10, 20)),
]


@pytest.mark.parametrize("found", FILTERS, ids=["sources", "days", "sources+range", "source+open-range"])
def test_index_and_exact_forms_agree_with_exact_cosine(graph, settings, embedder, found) -> None:
    question = "Which company recalled robots after a battery fire, and what did the jury decide?"
    expected = exact_ranking(graph, embedder, question, found, "sample")
    assert 0 < len(expected) < 34          # a real restriction of the sample's chunks
    for mode in ("index", "exact"):
        result = retriever(graph, settings, embedder, FixedFilter(found), mode=mode).search(question, top_k=5)
        chunks = result.hops[0].chunks
        assert [c.chunk_id for c in chunks] == expected[:5], mode
        assert all(found.admits(c.source, c.published_at) for c in chunks)
        assert result.hops[0].filters == found.to_json() and result.diagnostic(FilterExtraction).fallback is False
        assert set(result.phases) == {"filter", "search", "rerank"} and result.params["filter_mode"] == mode


@pytest.mark.parametrize(("keep", "depth", "words"), [(8, None, "keep"), (4, 12, "keep"), (8, None, "drop")],
                         ids=["k", "deeper", "drop-words"])
def test_hybrid_candidates_fuse_vector_and_bm25_inside_the_filter(graph, settings, embedder, keep, depth,
                                                                  words) -> None:
    """--metarag-search hybrid: alpha x vector/best + (1 - alpha) x BM25/best over admitted chunks only,
    each side's first K (or --hybrid-depth) fused before the best K are kept; with --filter-words drop
    the BM25 side's query is the question without the words naming the filter's sources and dates."""
    from mhgraph.filters.words import FilterWords
    from mhgraph.retrieval.bm25 import lucene_query

    found = FILTERS[0]
    question = "Which company recalled its Atlas Home robots over a battery fire risk?"
    keywords = question
    if words == "drop":   # one of the filter's sources repeats its own name in an article's text
        question = ("Did Circuit Weekly and Global Finance Wire report between October 1 and December 31, 2023, "
                    "that a company recalled its Atlas Home robots over a battery fire risk?")
        keywords = ("Did and report between and , that a company recalled its Atlas Home robots over a battery "
                    "fire risk?")
        found = replace(found, day_from=date(2023, 10, 1), day_to=date(2023, 12, 31))

    def search(**kw):
        filter_words = FilterWords.from_graph(graph, settings.neo4j_database, "sample") if words == "drop" else None
        return retriever(graph, settings, embedder, FixedFilter(found), search="hybrid", alpha=0.3,
                         candidates=keep, filter_words=filter_words, **kw).search(question, top_k=keep)

    result = search(hybrid_depth=depth)
    assert result.params["search"] == "hybrid" and result.params["filter_mode"] == "exact"
    assert result.params.get("hybrid_depth") == depth
    assert result.diagnostic(FilterExtraction).keywords == (keywords if words == "drop" else None)
    assert result.params.get("filter_words") == ("drop" if words == "drop" else None)
    sides = depth or keep
    rows, _, _ = graph.execute_query("MATCH (c:Chunk {corpus: 'sample'}) RETURN c.id AS id, c.source AS s, "
                                     "c.published_at AS p, c.embedding AS e")
    admitted = {r["id"]: r for r in rows if found.admits(r["s"], r["p"].to_native())}
    assert len(admitted) > sides         # the depth reaches chunks K alone would not
    q = np.asarray(embedder.embed_query(question))
    cosine = sorted(((cid, (1 + float(q @ np.asarray(r["e"]))) / 2) for cid, r in admitted.items()),
                    key=lambda x: -x[1])[:sides]
    hits, _, _ = graph.execute_query("CALL db.index.fulltext.queryNodes('chunk_text_sample', $q) YIELD node, score "
                                     "RETURN node.id AS id, score", q=lucene_query(keywords))
    bm25 = [(h["id"], h["score"]) for h in hits if h["id"] in admitted][:sides]
    fused: dict[str, float] = {}
    for side, weight in ((cosine, 0.3), (bm25, 0.7)):
        for cid, score in side:
            fused[cid] = fused.get(cid, 0.0) + weight * score / side[0][1]
    chunks = result.hops[0].chunks
    expected = sorted(fused.items(), key=lambda x: (-x[1], x[0]))[:keep]
    assert [c.chunk_id for c in chunks] == [cid for cid, _ in expected]
    assert [c.score for c in chunks] == pytest.approx([score for _, score in expected], abs=1e-4)
    if depth:   # deeper sides change the scores of the chunks kept (the premise of the option)
        assert [c.score for c in chunks] != pytest.approx([c.score for c in search().hops[0].chunks], abs=1e-4)
    if words == "drop":   # the outlet's name in the BM25 query would favour the article repeating it
        kept = retriever(graph, settings, embedder, FixedFilter(found), search="hybrid", alpha=0.3,
                         candidates=keep).search(question, top_k=keep)
        assert [c.score for c in chunks] != pytest.approx([c.score for c in kept.hops[0].chunks], abs=1e-4)


@pytest.mark.parametrize("kind", ["vector", "hybrid"])
def test_per_source_gives_each_named_source_its_share_of_the_candidates(graph, settings, embedder, kind) -> None:
    """--per-source: each source the filter names searched apart for ceil(K / sources) candidates,
    merged by score; a filter naming one source searches as without it."""
    question = "Did Solenne Labs change the Hush Pro earbuds' noise cancelling after the patent verdict?"
    two = MetadataFilter(("Circuit Weekly", "Global Finance Wire"))

    def search(found: MetadataFilter, k: int, **kw):
        return retriever(graph, settings, embedder, FixedFilter(found), mode="exact", search=kind, candidates=k,
                         **kw).search(question, top_k=k)

    plain = search(two, 4)
    # the premise: one search inside the filter gives the earbuds' outlet more than its share
    assert [c.source for c in plain.hops[0].chunks].count("Circuit Weekly") > 2
    split = search(two, 4, per_source=True)
    assert split.params["per_source"] is True and "per_source" not in plain.params
    each = {name: search(MetadataFilter((name,)), 2).hops[0].chunks for name in two.sources}
    assert all(len(found) == 2 for found in each.values())
    expected = sorted((c for found in each.values() for c in found), key=lambda c: (-c.score, c.chunk_id))
    assert [(c.chunk_id, c.source) for c in split.hops[0].chunks] == [(c.chunk_id, c.source) for c in expected]
    one = MetadataFilter(("Circuit Weekly",))
    assert ([c.chunk_id for c in search(one, 5, per_source=True).hops[0].chunks]
            == [c.chunk_id for c in search(one, 5).hops[0].chunks])


def test_per_source_gives_the_places_a_source_leaves_empty_to_the_others(graph, settings, embedder) -> None:
    """A source admitting fewer chunks than its share leaves its places to the other sources' next
    chunks, so the search still gives K; shares rounded up are cut back to K."""
    question = "Which club did Tomás Ferreira leave, and what did the earbuds' patent verdict decide?"
    small, big = "Courtside Daily", "Circuit Weekly"
    admitted = {name: exact_ranking(graph, embedder, question, MetadataFilter((name,)), "sample") for name in (small, big)}
    share = len(admitted[small]) + 1          # the small source is one short of its share
    assert len(admitted[big]) > share         # the premise: the big source has a chunk to give
    found = retriever(graph, settings, embedder, FixedFilter(MetadataFilter((small, big))), mode="exact",
                      candidates=2 * share, per_source=True).search(question, top_k=2 * share)
    chunks = found.hops[0].chunks
    assert {c.chunk_id for c in chunks} == set(admitted[small]) | set(admitted[big][:share + 1])
    assert len(chunks) == 2 * share and [c.score for c in chunks] == sorted((c.score for c in chunks), reverse=True)
    three = MetadataFilter((small, big, "Global Finance Wire"))     # 10 / 3 sources: shares of 4, cut to 10
    found = retriever(graph, settings, embedder, FixedFilter(three), mode="exact", candidates=10,
                      per_source=True).search(question, top_k=10)
    assert len(found.hops[0].chunks) == 10 and found.diagnostic(FilterExtraction).candidates_found == 10


def test_a_filter_admitting_fewer_than_k_returns_what_it_admits(graph, settings, embedder) -> None:
    found = MetadataFilter(("Courtside Daily",), days=(date(2023, 11, 15), date(2023, 12, 17)))
    admitted = exact_ranking(graph, embedder, "football transfer", found, "sample")
    assert 0 < len(admitted) < 5
    for mode in ("index", "exact"):
        chunks = retriever(graph, settings, embedder, FixedFilter(found), mode=mode).search("football transfer",
                                                                                           top_k=10).hops[0].chunks
        assert [c.chunk_id for c in chunks] == admitted
    nothing = MetadataFilter(("Circuit Weekly",), days=(date(2020, 1, 1),))
    assert retriever(graph, settings, embedder, FixedFilter(nothing)).search("x", top_k=5).hops[0].chunks == []


def test_no_filter_falls_back_to_unfiltered_vector_search(graph, settings, embedder) -> None:
    question = "What is the best way to store a bicycle in winter?"
    result = retriever(graph, settings, embedder, FixedFilter(MetadataFilter())).search(question, top_k=4)
    vector = build_retriever("vector", graph, replace(settings, corpus="sample"), embedder=embedder).search(
        question, top_k=4)
    assert result.diagnostic(FilterExtraction).fallback is True and result.hops[0].filters is None
    assert [c.chunk_id for c in result.hops[0].chunks] == [c.chunk_id for c in vector.hops[0].chunks]


def test_injection_in_names_never_reaches_cypher(graph, settings, embedder) -> None:
    """Names are parameters: a hostile one matches no chunk and changes nothing in the graph."""
    before, _, _ = graph.execute_query("MATCH (n) RETURN count(n) AS n")
    hostile = MetadataFilter(("x' OR 1=1 WITH 1 AS a MATCH (n) DETACH DELETE n //", "Circuit Weekly\"}) RETURN 1 //"))
    for mode in ("index", "exact"):
        result = retriever(graph, settings, embedder, FixedFilter(hostile), mode=mode).search("robots", top_k=5)
        assert result.hops[0].chunks == []
    after, _, _ = graph.execute_query("MATCH (n) RETURN count(n) AS n")
    assert after[0]["n"] == before[0]["n"]


@pytest.mark.skipif(not (BENCHMARK / "MultiHopRAG.json").is_file(), reason="the benchmark is not beside the checkout")
def test_both_forms_agree_on_benchmark_questions(graph, settings, embedder) -> None:
    """Benchmark questions whose evidence lies in the ingested outlets, with their rules filters."""
    extractor = build_extractor("rules", graph, settings.neo4j_database, "news")
    assert isinstance(extractor, RulesExtractor)
    questions = [q for q in json.loads((BENCHMARK / "MultiHopRAG.json").read_text())
                 if q["evidence_list"] and all(e["source"] in NEWS_SOURCES for e in q["evidence_list"])][:12]
    assert len(questions) == 12
    filtered = 0
    for q in questions:
        found = extractor.extract(q["query"]).filter
        filtered += not found.is_empty
        ids = {}
        for mode in ("index", "exact"):
            result = retriever(graph, settings, embedder, extractor, mode=mode, corpus="news").search(q["query"],
                                                                                                      top_k=10)
            ids[mode] = [c.chunk_id for c in result.hops[0].chunks]
        assert ids["index"] == ids["exact"] == exact_ranking(graph, embedder, q["query"], found, "news")[:10]
    assert filtered >= 10


# -- rerankers ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory):
    """A 2-layer BERT cross-encoder with random weights and MiniLM's tokenizer, saved as a model
    folder twice: one named like a bge-reranker (FlagReranker loads it), one not (CrossEncoder)."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from mhgraph.embeddings.sentence import resolve_model

    tokenizer = AutoTokenizer.from_pretrained(resolve_model("all-MiniLM-L6-v2"))
    torch.manual_seed(7)
    model = BertForSequenceClassification(BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32,
                                                     num_hidden_layers=2, num_attention_heads=2,
                                                     intermediate_size=64, num_labels=1)).eval()
    root = tmp_path_factory.mktemp("rerankers")
    for name in ("tiny-cross-encoder", "bge-reranker-tiny"):
        model.save_pretrained(root / name)
        tokenizer.save_pretrained(root / name)
    return root, model, tokenizer


PASSAGES = ["Veltrix recalled 62,000 Atlas Home robots over a battery fire risk.",
            "The striker scored twice against his former club.",
            "A jury awarded $48 million in the patent case.",
            "Shares slid 18 per cent after the recall."]


def _logits(model, tokenizer, query, passages):
    import torch

    batch = tokenizer([query] * len(passages), passages, padding=True, truncation=True, return_tensors="pt")
    with torch.no_grad():
        return model(**batch).logits[:, 0].tolist()


def test_cross_encoder_path_gives_the_sigmoid_of_the_models_logits(tiny_cross_encoder) -> None:
    root, model, tokenizer = tiny_cross_encoder
    query = "Which company recalled robots?"
    expected = _logits(model, tokenizer, query, PASSAGES)
    plain = load_reranker(str(root / "tiny-cross-encoder"), precision="float32")
    assert isinstance(plain, CrossEncoderReranker) and plain.name.startswith("cross-encoder:")
    scores = plain.score(query, PASSAGES)     # sigmoid of the logits: the same order
    assert scores == pytest.approx(1 / (1 + np.exp(-np.array(expected))), abs=1e-6)


def test_flag_reranker_path_gives_the_models_logits(tiny_cross_encoder) -> None:
    root, model, tokenizer = tiny_cross_encoder
    query = "Which company recalled robots?"
    try:
        import FlagEmbedding  # noqa: F401
    except ImportError:
        pytest.skip("FlagEmbedding is missing or does not import here: FlagReranker itself is not run "
                    "(test_bge_reranker_falls_back_to_cross_encoder_when_flagembedding_is_broken covers that case)")
    flag = load_reranker(str(root / "bge-reranker-tiny"))
    assert isinstance(flag, FlagCrossEncoderReranker)
    expected = _logits(model, tokenizer, query, PASSAGES)
    assert flag.score(query, PASSAGES) == pytest.approx(expected, abs=1e-4)   # FlagReranker: raw logits


def test_cross_encoder_scores_under_bf16_autocast(tiny_cross_encoder) -> None:
    """precision bfloat16 really runs in bfloat16 (the scores move by its rounding, never by more)."""
    root, model, tokenizer = tiny_cross_encoder
    query = "Which company recalled robots?"
    fp32 = load_reranker(str(root / "tiny-cross-encoder"), precision="float32").score(query, PASSAGES)
    bf16 = load_reranker(str(root / "tiny-cross-encoder"), precision="bfloat16")
    assert bf16.bf16 is True
    scores = bf16.score(query, PASSAGES)
    assert scores == pytest.approx(fp32, abs=0.02) and scores != pytest.approx(fp32, abs=1e-6)


def test_cross_encoder_scores_in_int8(tiny_cross_encoder) -> None:
    """precision int8: every linear layer of the model is quantized dynamically (int8 weights), the
    scores move by quantization error only, and the name says so."""
    import torch
    from torch.ao.nn.quantized.dynamic import Linear as DynamicInt8Linear

    root, model, _ = tiny_cross_encoder
    query = "Which company recalled robots?"
    fp32 = load_reranker(str(root / "tiny-cross-encoder"), precision="float32").score(query, PASSAGES)
    int8 = load_reranker(str(root / "tiny-cross-encoder"), precision="int8")
    layers = [m for m in int8.model.model.modules() if isinstance(m, (torch.nn.Linear, DynamicInt8Linear))]
    assert layers and all(isinstance(m, DynamicInt8Linear) for m in layers)
    assert len(layers) == sum(isinstance(m, torch.nn.Linear) for m in model.modules())
    assert int8.bf16 is False and int8.name.endswith("(int8)") and str(int8.model.device) == "cpu"
    scores = int8.score(query, PASSAGES)
    assert scores == pytest.approx(fp32, abs=0.02) and scores != pytest.approx(fp32, abs=1e-7)
    # a bge-reranker asked for int8 runs on CrossEncoder (FlagReranker has no such mode): the same model
    flag = load_reranker(str(root / "bge-reranker-tiny"), precision="int8")
    assert isinstance(flag, CrossEncoderReranker) and flag.score(query, PASSAGES) == pytest.approx(scores, abs=1e-6)


def test_int8_runs_on_the_cpu() -> None:
    """int8 takes the CPU where no device is named (a GPU would be chosen otherwise) and refuses
    another device in one line naming the option, before any model loads; the rest keep theirs."""
    from mhgraph.errors import MhgraphError
    from mhgraph.rerank.precision import device_for

    assert device_for("int8", None) == "cpu" and device_for("int8", "cpu") == "cpu"
    assert device_for("auto", None) is None and device_for("bfloat16", "cuda:0") == "cuda:0"
    with pytest.raises(MhgraphError, match="rerank_precision int8 runs on the CPU only, not on cuda:0"):
        device_for("int8", "cuda:0")


def test_auto_is_float32_where_the_code_paths_are_held_below_bf16(monkeypatch) -> None:
    """auto's bfloat16 only where it is fast: with oneDNN or ATen held to AVX2 (as bench/rerank_cost.py
    --isa avx2 holds them), bf16 is emulated, so auto is float32 even on a CPU with AVX512-BF16."""
    from mhgraph.training.precision import fast_bf16

    for name, value in (("ONEDNN_MAX_CPU_ISA", "AVX2"), ("ATEN_CPU_CAPABILITY", "avx2")):
        with monkeypatch.context() as held:
            held.setenv(name, value)
            fast_bf16.cache_clear()
            assert fast_bf16("cpu") is False
    fast_bf16.cache_clear()
    with monkeypatch.context() as wider:
        wider.setenv("ONEDNN_MAX_CPU_ISA", "AVX512_CORE_AMX")   # a cap above bf16 leaves it to the CPU's flags
        from mhgraph.training.precision import CPU_BF16_FLAGS

        flags = CPU_BF16_FLAGS.search(Path("/proc/cpuinfo").read_text(encoding="utf-8")) is not None
        assert fast_bf16("cpu") is flags
    fast_bf16.cache_clear()


def test_precision_applies_to_torch_cross_encoders_only(tiny_cross_encoder) -> None:
    """A precision for a reranker that has none (not a cross-encoder, or an ONNX export, which keeps
    the one it was exported at) is refused in one line, and so is an unknown one; in a combination
    it reaches the cross-encoder alone."""
    from mhgraph.errors import MhgraphError

    root, _, _ = tiny_cross_encoder
    for spec in ("nanoranker", "bi-encoder:bge-small-en-v1.5", "sentences:all-MiniLM-L6-v2"):
        with pytest.raises(MhgraphError, match="not a cross-encoder: a precision"):
            load_reranker(spec, precision="int8")
    with pytest.raises(MhgraphError, match="holds no cross-encoder: a precision"):
        load_reranker("sentences:all-MiniLM-L6-v2+bi-encoder:all-MiniLM-L6-v2", precision="float32")
    for spec in (PACKAGED, f"{PACKAGED}+sentences:all-MiniLM-L6-v2"):
        with pytest.raises(MhgraphError, match="is an ONNX export, which keeps the precision") as caught:
            load_reranker(spec, precision="int8")
        assert "\n" not in str(caught.value)
    with pytest.raises(MhgraphError, match="rerank_precision 'int4': use one of auto, float32, bfloat16, int8"):
        load_reranker(str(root / "tiny-cross-encoder"), precision="int4")
    combined = load_reranker(f"{root / 'tiny-cross-encoder'}+sentences:all-MiniLM-L6-v2", precision="int8")
    cross, sentences = combined.parts
    assert cross.precision == "int8" and cross.name.endswith("(int8)")
    assert sentences.name == "sentences:all-MiniLM-L6-v2"


def test_bge_reranker_falls_back_to_cross_encoder_when_flagembedding_is_broken(tiny_cross_encoder, tmp_path,
                                                                               monkeypatch) -> None:
    """FlagEmbedding installed but failing to import (1.4.2 with transformers 5.10+): a bge-reranker
    still loads, with sentence-transformers' CrossEncoder (the same logits, through a sigmoid), and says so."""
    # an installed FlagEmbedding that fails as 1.4.2 does, found before any real one
    broken = tmp_path / "site" / "FlagEmbedding"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("raise ImportError(\"No module named 'transformers.modeling_attn_mask_utils'\")\n")
    monkeypatch.syspath_prepend(str(broken.parent))
    for name in [m for m in sys.modules if m == "FlagEmbedding" or m.startswith("FlagEmbedding.")]:
        monkeypatch.delitem(sys.modules, name)
    root, model, tokenizer = tiny_cross_encoder
    query = "Which company recalled robots?"
    with pytest.warns(UserWarning, match="does not import here.*loaded with sentence-transformers' CrossEncoder"):
        reranker = load_reranker(str(root / "bge-reranker-tiny"), precision="float32")
    assert isinstance(reranker, CrossEncoderReranker) and reranker.name.startswith("cross-encoder:")
    expected = _logits(model, tokenizer, query, PASSAGES)
    assert reranker.score(query, PASSAGES) == pytest.approx(1 / (1 + np.exp(-np.array(expected))), abs=1e-6)



# -- ONNX export: what the package ships --------------------------------------------------------------
@pytest.mark.parametrize("quantize", [False, True])
def test_onnx_export_scores_as_the_cross_encoder(tiny_cross_encoder, settings, tmp_path, quantize) -> None:
    """`mhgraph reranker export`: fp32 gives the cross-encoder's scores (the sigmoid of its logits,
    long passages truncated alike); int8 weights move them by quantization error only, and shrink the
    file. The questions it was trained on are recorded as keys, recognised whitespace-normalised."""
    root, model, tokenizer = tiny_cross_encoder
    query = "Which company recalled robots?"
    passages = PASSAGES + [PASSAGES[0] * 80]   # far over 512 tokens: truncated as the cross-encoder does
    expected = load_reranker(str(root / "tiny-cross-encoder"), precision="float32").score(query, passages)
    out = tmp_path / "onnx"
    done = run_cli(settings, "reranker", "export", str(root / "tiny-cross-encoder"), "--out", str(out),
                   "--quantize" if quantize else "--no-quantize", "--questions", str(SAMPLE / "questions.json"),
                   "--rerank-weight", "0.4")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["model.onnx", "reranker.json", "tokenizer.json"]
    reranker = load_reranker(str(out))
    assert isinstance(reranker, OnnxCrossEncoderReranker) and reranker.rerank_weight == 0.4
    scores = reranker.score(query, passages)
    if quantize:
        assert scores == pytest.approx(expected, abs=0.01) and (out / "model.onnx").stat().st_size < 1.5e6
    else:
        assert scores == pytest.approx(expected, abs=1e-6) and (out / "model.onnx").stat().st_size > 2.5e6
    assert reranker.score(query, []) == []
    sample = json.loads((SAMPLE / "questions.json").read_text())
    assert reranker.saw("  " + sample[0]["query"].replace(" ", "  ")) and not reranker.saw(query)
    assert f"in-domain trained on {len(sample)} questions" in reranker.name


def test_rerank_tokens_cut_pairs_shorter_on_every_cross_encoder_path(tiny_cross_encoder, settings, tmp_path) -> None:
    """rerank_tokens: a pair is cut to that many tokens, in torch and in ONNX Runtime alike (so both
    give the same scores at the same cut), and reports name the cut; a reranker that is not a
    cross-encoder refuses it in one line."""
    from mhgraph.errors import MhgraphError

    root, _, _ = tiny_cross_encoder
    query = "Which company recalled robots over a battery fire risk?"
    passages = ["The striker scored twice. " * 8 + PASSAGES[0], PASSAGES[1]]   # the match sits past token 24
    torch_path = load_reranker(str(root / "tiny-cross-encoder"), precision="float32", max_length=24)
    assert "24-token pairs" in torch_path.name
    full = load_reranker(str(root / "tiny-cross-encoder"), precision="float32").score(query, passages)
    short = torch_path.score(query, passages)
    # the long passage's cut changed what the model saw; the short one is whole either way
    assert short[0] != pytest.approx(full[0], abs=1e-7) and short[1] == pytest.approx(full[1], abs=1e-7)
    out = tmp_path / "onnx"
    assert run_cli(settings, "reranker", "export", str(root / "tiny-cross-encoder"), "--out", str(out),
                   "--no-quantize", "--questions", str(SAMPLE / "questions.json")).returncode == 0
    onnx_path = load_reranker(str(out), max_length=24)
    assert "24-token pairs" in onnx_path.name and onnx_path.score(query, passages) == pytest.approx(short, abs=1e-7)
    assert len(onnx_path.tokenizer.encode(query, passages[0]).ids) == 24
    for spec in ("nanoranker", "bi-encoder:bge-small-en-v1.5", "sentences:all-MiniLM-L6-v2"):
        with pytest.raises(MhgraphError, match="not a cross-encoder: a pair token limit"):
            load_reranker(spec, max_length=24)
    # focused: the long passage is read as its sentence that matches, as if it were that sentence
    # alone, in torch and ONNX Runtime alike; the short passage is read whole
    alone = load_reranker(str(out), max_length=24).score(query, [PASSAGES[0]])[0]
    for path in (load_reranker(str(root / "tiny-cross-encoder"), precision="float32", max_length=24, focus=True),
                 load_reranker(str(out), max_length=24, focus=True)):
        assert "(focused passages)" in path.name
        assert path.score(query, passages) == pytest.approx([alone, short[1]], abs=1e-6)
    with pytest.raises(MhgraphError, match="not a cross-encoder: focused passages"):
        load_reranker("sentences:all-MiniLM-L6-v2", focus=True)


def test_onnx_reranker_folder_errors_name_the_file(tmp_path) -> None:
    from mhgraph.errors import MhgraphError

    (tmp_path / "reranker.json").write_text("[]")
    with pytest.raises(MhgraphError, match=r"reranker.json: not an ONNX reranker description \(not a JSON object\)"):
        load_reranker(str(tmp_path))
    (tmp_path / "reranker.json").write_text(json.dumps({"format": "something else", "max_length": 64}))
    with pytest.raises(MhgraphError, match=r"reranker.json: not an ONNX reranker description .*format") as caught:
        load_reranker(str(tmp_path))
    (tmp_path / "reranker.json").write_text(json.dumps({"format": "mhgraph-onnx-cross-encoder", "max_length": 64,
                                                        "activation": "sigmoid", "rerank_weight": 2}))
    with pytest.raises(MhgraphError, match="rerank_weight must be from 0 to 1"):
        load_reranker(str(tmp_path))
    (tmp_path / "reranker.json").write_text(json.dumps({"format": "mhgraph-onnx-cross-encoder", "max_length": 64,
                                                        "activation": "sigmoid"}))
    with pytest.raises(MhgraphError, match="the ONNX reranker does not load") as caught:   # no model.onnx
        load_reranker(str(tmp_path))
    assert "\n" not in str(caught.value)


def test_packaged_reranker_loads_with_its_record() -> None:
    """The cross-encoder the package carries (int8 ONNX): it loads by name with its fusion weight
    and the questions it saw, and scores like a cross-encoder (probabilities, the same each time).
    What it ranks well is measured, not asserted: on crafted passages its order barely follows the
    question (README, Multi-Meta-RAG), so no order on a crafted case is claimed for it here."""
    reranker = load_reranker(PACKAGED)
    assert isinstance(reranker, OnnxCrossEncoderReranker) and reranker.name.startswith(f"onnx-cross-encoder:{PACKAGED}")
    assert reranker.rerank_weight == 0.5 and len(reranker.trained_on) > 1000
    assert reranker.description["max_length"] == 512 and reranker.description["activation"] == "sigmoid"
    question = "Which company recalled robots over a battery fire risk?"
    scores = reranker.score(question, PASSAGES)
    assert all(0.0 < s < 1.0 for s in scores) and reranker.score(question, PASSAGES) == scores
    assert not reranker.saw(question)
    if (BENCHMARK / "MultiHopRAG.json").is_file():   # it knows the development questions it was trained on
        first = json.loads((BENCHMARK / "MultiHopRAG.json").read_text())[0]["query"]
        assert reranker.saw(first)


def test_metarag_takes_the_rerankers_own_weight_unless_one_is_given(graph, settings, embedder) -> None:
    class Weighted(TableReranker):
        rerank_weight = 0.3

    found = MetadataFilter(("Circuit Weekly",))
    own = retriever(graph, settings, embedder, FixedFilter(found), reranker=Weighted({}))
    assert own.rerank_weight == 0.3 and own.params["rerank_weight"] == 0.3
    given = retriever(graph, settings, embedder, FixedFilter(found), reranker=Weighted({}), rerank_weight=0.8)
    assert given.rerank_weight == 0.8
    plain = retriever(graph, settings, embedder, FixedFilter(found), reranker=TableReranker({}))
    assert plain.rerank_weight == 1.0 and "rerank_weight" not in plain.params


def test_eval_labels_a_reranker_that_saw_the_questions(graph, settings, tiny_cross_encoder, tmp_path) -> None:
    """An exported reranker trained on the bundled questions: the eval says it saw them (not held out)."""
    root, _, _ = tiny_cross_encoder
    out = tmp_path / "onnx"
    assert run_cli(settings, "reranker", "export", str(root / "tiny-cross-encoder"), "--out", str(out),
                   "--questions", str(SAMPLE / "questions.json")).returncode == 0
    done = run_cli(settings, "eval", "--sample", "--method", "metarag", "--reranker", str(out), "-k", "3",
                   "--limit", "3", "--runs-dir", str(tmp_path / "runs"), "--no-trace", "--no-progress")
    assert done.returncode == 0, done.stderr
    assert "3 of 3 questions in training: not held out" in done.stdout
    assert "trained on 3 of the 3 questions evaluated" in done.stderr


def test_rerank_precision_reaches_the_cross_encoder_from_the_command_line(graph, settings, tiny_cross_encoder,
                                                                         tmp_path) -> None:
    """--rerank-precision int8 on metarag and on a compose rerank stage: the run's reranker is the
    int8 one (its name, as the run records it); on an ONNX export it is one line naming why."""
    root, _, _ = tiny_cross_encoder
    model = str(root / "tiny-cross-encoder")
    runs = tmp_path / "runs"
    picked = {"metarag": ["--reranker", model], "compose": ["--stages", f"candidates=hybrid rerank={model}"]}
    for method, picks in picked.items():
        done = run_cli(settings, "eval", "--sample", "--method", method, *picks, "--rerank-precision", "int8",
                       "-k", "3", "--limit", "2", "--runs-dir", str(runs), "--run-id", method, "--no-progress")
        assert done.returncode == 0, done.stderr
        assert f"cross-encoder:{model} (int8)" in (runs / method / "results.json").read_text()
    done = run_cli(settings, "query", "Who bought Ferreira?", "--corpus", "sample", "--method", "compose", "--stages",
                   f"candidates=hybrid rerank={PACKAGED}", "--rerank-precision", "float32")
    last = done.stderr.strip().splitlines()[-1]   # after the status lines, the error alone
    assert done.returncode != 0 and last.startswith("error: ")
    assert "is an ONNX export, which keeps the precision" in last


@pytest.mark.parametrize("spec", ["bi-encoder:all-MiniLM-L6-v2", "sentences:all-MiniLM-L6-v2", "nanoranker"])
def test_rerank_keeps_the_best_by_the_rerankers_scores(spec) -> None:
    """A crafted case: the passage that answers comes first, whatever the retrieval order was."""
    chunks = [RetrievedChunk(chunk_id=f"c{i}", score=1.0 - i / 10, rank=i + 1, text=t)
              for i, t in enumerate(reversed(PASSAGES))]
    reranker = load_reranker(spec)
    kept, seconds = rerank(reranker, "Which company recalled robots over a battery fire risk?", chunks, keep=2)
    assert kept[0].text == PASSAGES[0] and [c.rank for c in kept] == [1, 2] and seconds > 0
    assert kept[0].score > kept[1].score and reranker.name == spec
    assert reranker.score("q", []) == []


class TableReranker:
    """Scores read from a table: the fusion arithmetic, apart from any model."""

    name = "table"

    def __init__(self, table: dict[str, float]) -> None:
        self.table = table

    def score(self, query, passages):
        return [self.table[p] for p in passages]


def test_rerank_weight_fuses_standardised_reranker_and_search_scores() -> None:
    # search: a > b > c > d; reranker: d > c > a > b
    chunks = [RetrievedChunk(chunk_id=t, score=s, rank=i + 1, text=t)
              for i, (t, s) in enumerate([("a", 0.9), ("b", 0.8), ("c", 0.5), ("d", 0.4)])]
    reranker = TableReranker({"a": 0.0, "b": -1.0, "c": 1.0, "d": 2.0})
    alone, _ = rerank(reranker, "q", chunks, keep=4)
    assert [c.chunk_id for c in alone] == ["d", "c", "a", "b"]
    same, _ = rerank(reranker, "q", chunks, keep=4, weight=1.0)
    assert same == alone
    # z(search) = [1.21, 0.73, -0.73, -1.21], z(reranker) = [-0.45, -1.34, 0.45, 1.34]:
    # half and half, a (0.38) leads, then d (0.07), c (-0.14), b (-0.31)
    fused, _ = rerank(reranker, "q", chunks, keep=3, weight=0.5)
    assert [c.chunk_id for c in fused] == ["a", "d", "c"] and [c.rank for c in fused] == [1, 2, 3]
    assert fused[0].score == pytest.approx(0.5 * (0.9 - 0.65) / np.std([0.9, 0.8, 0.5, 0.4])
                                           + 0.5 * (0.0 - 0.5) / np.std([0.0, -1.0, 1.0, 2.0]))
    search_only, _ = rerank(reranker, "q", chunks, keep=4, weight=0.0)
    assert [c.chunk_id for c in search_only] == ["a", "b", "c", "d"]
    flat, _ = rerank(TableReranker({"a": 1.0}), "q", chunks[:1], keep=1, weight=0.5)   # one candidate: no spread
    assert flat[0].chunk_id == "a" and flat[0].score == 0.0
    assert rerank(reranker, "q", [], keep=3, weight=0.5) == ([], 0.0)   # a search that found nothing


def test_unloadable_reranker_is_one_line(tmp_path) -> None:
    from mhgraph.errors import MhgraphError

    with pytest.raises(MhgraphError, match="could not be loaded as a cross-encoder") as caught:
        load_reranker(str(tmp_path / "missing-model"))
    assert "\n" not in str(caught.value)


def test_metarag_reranks_candidates_down_to_k(graph, settings, embedder) -> None:
    found = MetadataFilter(("Circuit Weekly", "Global Finance Wire", "Northwind Tech Review"))
    question = "How many robots were recalled over the battery fire risk?"
    reranker = load_reranker("bi-encoder:all-MiniLM-L6-v2")
    plain = retriever(graph, settings, embedder, FixedFilter(found), candidates=8).search(question, top_k=3)
    reranked = retriever(graph, settings, embedder, FixedFilter(found), candidates=8,
                         reranker=reranker).search(question, top_k=3)
    assert len(plain.hops[0].chunks) == len(reranked.hops[0].chunks) == 3
    assert reranked.params["reranker"] == "bi-encoder:all-MiniLM-L6-v2" and reranked.phases["rerank"] > 0
    # the same model as the index: reranking 8 candidates keeps the index's own top 3
    assert [c.chunk_id for c in reranked.hops[0].chunks] == [c.chunk_id for c in plain.hops[0].chunks]


# -- end to end -------------------------------------------------------------------------------------
def test_eval_metarag_on_the_bundled_corpus(graph, settings, tmp_path) -> None:
    runs = {}
    for extractor in ("gold", "rules"):
        out = run_cli(settings, "eval", "--sample", "--method", "metarag", "--filter-extractor", extractor,
                      "-k", "4", "--runs-dir", str(tmp_path), "--run-id", f"metarag-{extractor}", "--no-progress")
        assert out.returncode == 0, out.stderr
        assert "## Metadata filters" in out.stdout and "Per step: filter p50" in out.stdout
        runs[extractor] = json.loads((tmp_path / f"metarag-{extractor}" / "report.json").read_text())
    gold, rules = runs["gold"]["filters"], runs["rules"]["filters"]
    assert gold["upper_bound"] and gold["groups"]["all"]["evidence_admitted"] == 1.0
    assert rules["extractor"] == "rules" and not rules["upper_bound"]
    assert rules["groups"]["all"]["source_recall"] > 0.8
    assert runs["gold"]["params"]["filter_extractor"] == "gold" and runs["gold"]["params"]["candidates"] == 20
    # the sample's questions are not in the benchmark's reference-filter file: no reference named
    assert rules["reference"] is None and "Reference filters:" not in out.stdout
    results = json.loads((tmp_path / "metarag-rules" / "results.json").read_text())
    assert all("extraction" in r and set(r["phases"]) == {"filter", "search", "rerank"} for r in results)
    # the Browser query shows one question's filter, what it admits, the kept evidence and the gold
    from mhgraph import cypher

    chunks = graph.execute_query("MATCH (c:Chunk {corpus: 'sample'}) RETURN c.source AS s, c.published_at AS p").records
    for extractor in ("gold", "rules"):   # gold: sources and days; rules: sources
        results = json.loads((tmp_path / f"metarag-{extractor}" / "results.json").read_text())
        question = next(r for r in results if r["extraction"]["filter"] and r["gold"])
        row = graph.execute_query(cypher.load("browser/metarag_filter"), run=f"metarag-{extractor}",
                                  question=question["id"]).records[0]
        assert json.loads(row["filter"]) == question["extraction"]["filter"] and row["extractor"] == extractor
        assert {s["name"] for s in row["filter_sources"]} == set(question["extraction"]["filter"]["source"])
        found = MetadataFilter.from_json(question["extraction"]["filter"])
        expected = sum(found.admits(r["s"], r["p"].to_native()) for r in chunks)
        assert row["admitted"] == expected > 0 and len(row["evidence"]) == len(question["hops"][0]["chunks"])
        assert {g["chunk"] for g in row["gold_admitted"]} == set(question["gold"])
        for g in row["gold_admitted"]:
            published = datetime.combine(g["published"].to_native(), datetime.min.time(), tzinfo=timezone.utc)
            assert g["admitted"] == found.admits(g["source"], published)
    bad = run_cli(settings, "eval", "--sample", "--method", "metarag", "--filter-mode", "fuzzy")
    assert bad.returncode == 2 and "Invalid value for '--filter-mode'" in bad.stderr


def test_a_run_where_no_filter_applied_reports_no_filter_quality() -> None:
    """On a corpus without sources or dates no question gets a filter: recall against the evidence
    would read 1.000 for a filter that never applied, so the report says so instead of a table."""
    from mhgraph.filters.diagnostics import FilterExtraction

    summary = {"groups": {"all": {"n": 10, "source_recall": 1.0, "date_recall": 1.0}}, "extractor": "rules",
               "questions": 12, "filtered": 0, "fallbacks": 12, "filtered_null": 0, "null": 2, "failures": 0,
               "dropped_names": {}, "reference": None}
    section = "\n".join(FilterExtraction.report_section(summary))
    assert "No question got a filter" in section and "source R" not in section and "1.0000" not in section
    applied = "\n".join(FilterExtraction.report_section({**summary, "filtered": 4, "fallbacks": 8}))
    assert "| all | 10 | 1.0000 | 1.0000 |" in applied and "No question got a filter" not in applied

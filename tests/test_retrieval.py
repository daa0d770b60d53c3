"""The vector and bm25 baselines run as Cypher against the real server and honour the interface."""

from __future__ import annotations

import pytest

from mhgraph.ingest.pipeline import ingest_corpus
from mhgraph.retrieval import build_retriever
from mhgraph.retrieval.bm25 import lucene_query
from tests.conftest import SAMPLE, run_cli


@pytest.fixture(scope="module")
def sample_graph(driver, settings, server):
    from mhgraph.embeddings.sentence import SentenceEmbedder
    from tests.conftest import wipe

    wipe(driver, settings.neo4j_database)
    ingest_corpus(SAMPLE / "corpus.json", settings, driver, embedder=SentenceEmbedder(), progress=False)
    return driver


def _titles(result):
    return [c.title for c in result.hops[0].chunks]


@pytest.mark.parametrize("method", ["vector", "bm25", "hybrid"])
def test_single_hop_ranked_evidence(method, sample_graph, settings, embedder) -> None:
    retriever = build_retriever(method, sample_graph, settings, embedder=embedder)
    result = retriever.search("Which company recalled its Atlas Home robots over battery fire risk?", top_k=5)
    assert result.method == method and len(result.hops) == 1 and result.seconds > 0
    chunks = result.hops[0].chunks
    assert len(chunks) == 5 and [c.rank for c in chunks] == [1, 2, 3, 4, 5]
    assert [c.score for c in chunks] == sorted((c.score for c in chunks), reverse=True)
    assert len({c.chunk_id for c in chunks}) == 5
    assert "recall" in chunks[0].title.lower() and chunks[0].source and chunks[0].published_at.year == 2023
    assert all(c.text and c.document_id for c in chunks)
    assert result.final_ranking() == chunks


def test_vector_scores_are_cosine_similarities(sample_graph, settings, embedder) -> None:
    result = build_retriever("vector", sample_graph, settings, embedder=embedder).search("patent verdict", top_k=3)
    for c in result.hops[0].chunks:
        records, _, _ = sample_graph.execute_query("MATCH (c:Chunk {id: $id}) RETURN c.embedding AS e", id=c.chunk_id)
        import numpy as np

        expected = float(np.dot(embedder.embed_query("patent verdict"), records[0]["e"]))
        assert c.score == pytest.approx((1 + expected) / 2, abs=1e-3)  # Neo4j maps cosine to [0, 1]


def test_vector_search_ratio_widens_the_index_search(sample_graph, settings, embedder) -> None:
    """The index is asked for top_k x search_ratio neighbours; the best top_k come back, best first."""
    from dataclasses import replace

    import numpy as np

    question = "Which streaming service raised its prices?"
    rows, _, _ = sample_graph.execute_query("MATCH (c:Chunk) RETURN c.id AS id, c.embedding AS e")
    vector = embedder.embed_query(question)
    exact = [r["id"] for r in sorted(rows, key=lambda r: -float(np.dot(vector, r["e"])))][:3]
    for ratio in (1, 10):
        retriever = build_retriever("vector", sample_graph, replace(settings, vector_search_ratio=ratio), embedder)
        result = retriever.search(question, top_k=3)
        assert result.params == {"top_k": 3, "corpus": "sample", "search_ratio": ratio}
        assert retriever.params == {"corpus": "sample", "search_ratio": ratio}
        assert [c.chunk_id for c in result.final_ranking()] == exact  # 34 chunks: HNSW is exact here


def test_vector_search_filtered_by_source_inside_the_index(sample_graph, settings, embedder) -> None:
    """retrieval/vector_search_sources: only the given sources, best first, the same order as exact search."""
    import numpy as np

    from mhgraph import cypher

    sources = ["Circuit Weekly", "Global Finance Wire"]
    embedding = embedder.embed_query("robot recall battery fire")
    records, _, _ = sample_graph.execute_query(cypher.load("retrieval/vector_search_sources"), embedding=embedding,
                                               sources=sources, corpus="sample", top_k=50, candidates=50,
                                               database_=settings.neo4j_database)
    pool, _, _ = sample_graph.execute_query("MATCH (c:Chunk) WHERE c.source IN $sources RETURN c.id AS id, "
                                            "c.embedding AS e", sources=sources, database_=settings.neo4j_database)
    exact = sorted(pool, key=lambda r: -float(np.dot(embedding, r["e"])))
    assert 3 <= len(pool) < 34  # a real restriction of the sample's 34 chunks
    assert {r["source"] for r in records} == set(sources)
    assert [r["chunk_id"] for r in records] == [r["id"] for r in exact]


def test_bm25_survives_lucene_syntax(sample_graph, settings) -> None:
    retriever = build_retriever("bm25", sample_graph, settings)
    result = retriever.search('Solenne "Hush Pro" (firmware) AND patent: verdict? [jury] {48} ~ ^ / \\ -x +y', top_k=3)
    assert "Solenne" in " ".join(_titles(result))
    assert retriever.search("?!", top_k=3).hops[0].chunks == []
    assert lucene_query("a AND b OR NOT c") == "a and b or not c"
    assert lucene_query('x:"y"') == 'x\\:\\"y\\"'


def test_query_command_prints_evidence_per_hop(sample_graph, settings) -> None:
    out = run_cli(settings, "query", "Who bought Ferreira?", "--method", "bm25", "-k", "3")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("bm25 on corpus 'sample': 1 hop(s)")
    # the fulltext query as sent: its escape shown once, not doubled as a repr would
    assert any(l.startswith("hop 1  query: 'Who bought Ferreira\\?'  filters: -") for l in lines), lines
    ranked = [l for l in lines if l[:3].strip().isdigit()]
    assert len(ranked) == 3 and all(" | " in l and "2023-" in l for l in ranked)
    bad = run_cli(settings, "query", "x", "--method", "nope")
    assert bad.returncode == 2 and bad.stderr.strip().endswith(   # --method offers exactly the registered names
        "Invalid value for '--method' / '-m': 'nope' is not one of 'vector', 'bm25', 'hybrid', 'metarag', 'treehop', "
        "'ircot', 'decompose', 'claims', 'ppr', 'compose'.")


@pytest.mark.parametrize("question", [
    "Which company recalled its Atlas Home robots over battery fire risk?",
    "Did the streaming service raise prices before the patent verdict?",
])
def test_hybrid_returns_what_neo4j_graphrags_hybrid_retriever_returns(question, sample_graph, settings, embedder) -> None:
    """On a one-corpus graph, our hybrid query (theirs plus the corpus filter) ranks as theirs does."""
    from neo4j_graphrag.retrievers import HybridRetriever as GraphragHybrid

    from mhgraph.retrieval.hybrid import HybridOptions

    from mhgraph.graph.schema import VECTOR_INDEX, fulltext_index

    ours = build_retriever("hybrid", sample_graph, settings, embedder=embedder,
                           options=HybridOptions(ranker="naive")).search(question, top_k=6)
    theirs = GraphragHybrid(sample_graph, VECTOR_INDEX, fulltext_index("sample"), embedder=embedder, return_properties=["id"],
                            neo4j_database=settings.neo4j_database)
    raw = theirs.get_search_results(lucene_query(question), query_vector=embedder.embed_query(question), top_k=6,
                                    effective_search_ratio=settings.vector_search_ratio)
    expected = [(r["node"]["id"], r["score"]) for r in raw.records]
    got = [(c.chunk_id, c.score) for c in ours.hops[0].chunks]
    assert [s for _, s in got] == pytest.approx([s for _, s in expected], abs=1e-6)
    assert {i for i, _ in got} == {i for i, _ in expected}   # same chunks (ties may swap places)
    assert max(s for _, s in got) == pytest.approx(1.0)       # the best of a side scores 1


@pytest.mark.parametrize(("question", "k", "depth"), [
    ("Which company recalled its Atlas Home robots over battery fire risk?", 6, None),
    ("Did the streaming service raise prices before the patent verdict?", 4, 14),
], ids=["k", "deeper"])
def test_hybrid_linear_ranker_is_the_weighted_sum(sample_graph, settings, embedder, question, k, depth) -> None:
    """ranker=linear: alpha x (vector score / best vector score) + (1 - alpha) x (BM25 / best BM25),
    summed per chunk over both sides (the sample's 34 chunks are all vector candidates at K >= 4);
    the BM25 side's first K hits, or its first `depth`."""
    from collections import defaultdict

    from mhgraph.retrieval.hybrid import HybridOptions

    alpha = 0.3
    linear = HybridOptions(ranker="linear", alpha=alpha, depth=depth)
    result = build_retriever("hybrid", sample_graph, settings, embedder=embedder, options=linear).search(question,
                                                                                                      top_k=k)
    assert result.params["ranker"] == "linear" and result.params["alpha"] == alpha
    assert result.params.get("depth") == depth
    vector = build_retriever("vector", sample_graph, settings, embedder=embedder).search(question, top_k=60)
    bm25 = build_retriever("bm25", sample_graph, settings).search(question, top_k=depth or k)
    assert len(bm25.hops[0].chunks) == (depth or k)      # BM25 finds more than K: the depth matters
    expected: dict[str, float] = defaultdict(float)
    for weight, hits in ((alpha, vector.hops[0].chunks), (1 - alpha, bm25.hops[0].chunks)):
        best = max(c.score for c in hits)
        for c in hits:
            expected[c.chunk_id] += weight * c.score / best
    top = sorted(expected.items(), key=lambda kv: -kv[1])[:k]
    got = [(c.chunk_id, c.score) for c in result.hops[0].chunks]
    assert [s for _, s in got] == pytest.approx([s for _, s in top], abs=1e-6)
    assert {i for i, _ in got} == {i for i, _ in top}
    # a chunk both sides rank first scores alpha + (1 - alpha) = 1 (neo4j-graphrag's UNION would drop one half)
    both = set(c.chunk_id for c in vector.hops[0].chunks[:1]) & set(c.chunk_id for c in bm25.hops[0].chunks[:1])
    for chunk_id in both:
        assert dict(got)[chunk_id] == pytest.approx(1.0)
    if depth:   # the premise: BM25's hits past K change what is kept
        plain = build_retriever("hybrid", sample_graph, settings, embedder=embedder,
                                options=HybridOptions(ranker="linear", alpha=alpha)).search(question, top_k=k)
        assert [s for _, s in got] != pytest.approx([c.score for c in plain.hops[0].chunks], abs=1e-6)

"""Graph traversal (`ppr`): personalized PageRank against its closed form, synonym edges between
claim names, the claim graph read from Neo4j, the method on a real server (seeds, walk, ranking,
traces, Browser query) and its one-line errors."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import scipy.sparse as sp

from mhgraph.claims.synonyms import nearest_pairs
from mhgraph.errors import MhgraphError
from mhgraph.traversal.pagerank import Transitions, personalized_pagerank


def closed_form(adjacency: np.ndarray, reset: np.ndarray, damping: float) -> np.ndarray:
    """p = (1 - d) r + d (W^T p + dangling(p) r), solved as one linear system."""
    n = len(adjacency)
    strength = adjacency.sum(axis=1)
    w = np.divide(adjacency, strength[:, None], out=np.zeros_like(adjacency), where=strength[:, None] > 0)
    r = reset / reset.sum()
    dangling = (strength == 0).astype(float)
    m = np.eye(n) - damping * (w.T + np.outer(r, dangling))
    return np.linalg.solve(m, (1 - damping) * r)


def test_pagerank_matches_the_closed_form_with_weights_and_a_dangling_node() -> None:
    a = np.zeros((6, 6))
    for i, j, w in [(0, 1, 1.0), (1, 2, 2.0), (2, 3, 1.0), (3, 0, 0.5), (1, 3, 3.0), (3, 4, 1.0)]:
        a[i, j] = a[j, i] = w           # node 5 has no edges
    reset = np.array([1.0, 0, 0, 0, 0, 0.5])
    for damping in (0.5, 0.85):
        p, iterations = personalized_pagerank(Transitions.from_adjacency(sp.csr_matrix(a)), reset, damping)
        assert np.allclose(p, closed_form(a, reset, damping), atol=1e-9)
        assert p.sum() == pytest.approx(1.0) and 1 < iterations < 200
    # heavier edges carry more of the walk: from node 1, node 3 (weight 3) beats node 2 (weight 2)
    p, _ = personalized_pagerank(Transitions.from_adjacency(sp.csr_matrix(a)), np.eye(6)[1], 0.5)
    assert p[3] > p[2]
    # damping 0: the walk never leaves the seeds
    p, _ = personalized_pagerank(Transitions.from_adjacency(sp.csr_matrix(a)), reset, 0.0)
    assert np.allclose(p, reset / reset.sum())


def test_pagerank_refuses_bad_input() -> None:
    t = Transitions.from_adjacency(sp.csr_matrix(np.ones((3, 3))))
    with pytest.raises(MhgraphError, match="damping must be in"):
        personalized_pagerank(t, np.ones(3), 1.0)
    with pytest.raises(MhgraphError, match="reset has"):
        personalized_pagerank(t, np.ones(4))
    with pytest.raises(MhgraphError, match="positive sum"):
        personalized_pagerank(t, np.zeros(3))
    with pytest.raises(MhgraphError, match="must not be negative"):
        Transitions.from_adjacency(sp.csr_matrix(-np.ones((2, 2))))


def test_nearest_pairs_keep_the_top_neighbours_above_the_threshold_once() -> None:
    angles = np.radians([0, 10, 25, 45, 90])
    v = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    pairs = nearest_pairs(v, threshold=0.9, neighbours=1, block=2)    # blocks of 2 rows: the split is seamless
    # each row's single nearest; 90 deg is 45 from its nearest (cos 0.71), below the threshold
    assert [(i, j) for i, j, _ in pairs] == [(0, 1), (1, 2), (2, 3)]
    assert [s for _, _, s in pairs] == pytest.approx(np.cos(np.radians([10, 15, 20])))
    two = {(i, j) for i, j, _ in nearest_pairs(v, threshold=0.9, neighbours=2)}
    assert two == {(0, 1), (0, 2), (1, 2), (2, 3)}     # 0-2 (25 deg, cos 0.906) joins; 1-3 (35 deg, 0.82) not
    assert nearest_pairs(v[:1], 0.5, 10) == []


# -- on the real server -----------------------------------------------------------------------
pytest.importorskip("spacy", reason="the claims extra (pip install -e '.[claims]') is not installed")

from tests.conftest import SAMPLE, eval_run_dir, run_cli
from tests.test_claims import TWO_ARTICLES, _ingested

QUESTION = "Which club did Tomás Ferreira leave for Kingsbridge Rovers, and why did that club sack its manager?"


def _built(articles, name, driver, settings, embedder, tmp_path):
    from mhgraph.claims.build import build_claims
    from mhgraph.claims.extract import OfflineClaimExtractor

    driver = _ingested(articles, name, driver, settings, embedder, tmp_path)
    summary = build_claims(driver, settings.neo4j_database, name, OfflineClaimExtractor(), embedder, progress=False)
    return driver, summary


@pytest.fixture
def two_built(empty_graph, settings, embedder, tmp_path):
    return _built(TWO_ARTICLES, "two", empty_graph, settings, embedder, tmp_path)


@pytest.fixture
def sample_built(empty_graph, settings, embedder, tmp_path):
    articles = json.loads((SAMPLE / "corpus.json").read_text())
    return _built(articles, "sample", empty_graph, settings, embedder, tmp_path)


def test_synonym_edges_are_drawn_marked_and_replaced(sample_built, settings, embedder) -> None:
    from mhgraph.claims.synonyms import link_synonyms

    driver, summary = sample_built
    db = settings.neo4j_database
    count = "MATCH (a {corpus: 'sample'})-[s:SYNONYM]->(b) RETURN count(s) AS n, min(s.score) AS low, " \
            "sum(CASE WHEN a = b THEN 1 ELSE 0 END) AS loops"
    mark = "MATCH (c:Corpus {name: 'sample'}) RETURN c.synonym_threshold AS t, c.synonym_edges AS e"
    stored = driver.execute_query(count, database_=db).records[0]
    assert summary.synonyms is not None and stored["n"] == summary.synonyms.edges
    assert summary.synonyms.names == summary.topics + summary.targets
    assert tuple(driver.execute_query(mark, database_=db).records[0].values()) == (0.8, summary.synonyms.edges)
    # redrawn looser: replaced, not added to, and the same when drawn twice
    loose = link_synonyms(driver, db, "sample", embedder, threshold=0.5, neighbours=3)
    again = link_synonyms(driver, db, "sample", embedder, threshold=0.5, neighbours=3)
    stored = driver.execute_query(count, database_=db).records[0]
    assert stored["n"] == loose.edges == again.edges > summary.synonyms.edges
    assert stored["low"] >= 0.5 and stored["loops"] == 0
    assert loose.embedded == 0          # the names kept their embeddings
    assert tuple(driver.execute_query(mark, database_=db).records[0].values()) == (0.5, loose.edges)


def test_ppr_walks_from_seed_facts_to_chunks_across_articles(sample_built, settings, embedder) -> None:
    from mhgraph.retrieval.ppr import PPRRetriever
    from mhgraph.traversal.claim_graph import ClaimGraph
    from mhgraph.traversal.diagnostics import PPRWalk

    driver, summary = sample_built
    db = settings.neo4j_database
    graph = ClaimGraph.load(driver, db, "sample", embeddings=True)
    chunks = driver.execute_query("MATCH (c:Chunk {corpus: 'sample'}) RETURN count(c) AS n", database_=db).records[0]["n"]
    assert len(graph.chunk_ids) == chunks and len(graph.names) == summary.topics + summary.targets
    assert graph.edges["synonyms"] == summary.synonyms.edges and graph.edges["contains"] > 0
    # the edges as Neo4j counts them; a claim without a topic (the sample has some) gives its
    # chunk - target edge alone
    def count(query: str) -> int:
        return driver.execute_query(query, database_=db).records[0]["n"]

    assert count("MATCH (k:Claim {corpus: 'sample'}) WHERE NOT (k)-[:ABOUT]->() RETURN count(k) AS n") > 0
    assert graph.edges["contains"] == count(
        "MATCH (c:Chunk {corpus: 'sample'})-[:HAS_CLAIM]->(:Claim)-[:ABOUT|TARGETS]->(n) "
        "RETURN count(DISTINCT [elementId(c), elementId(n)]) AS n")
    assert graph.edges["joins"] == count(
        "MATCH (p:Topic)<-[:ABOUT]-(:Claim {corpus: 'sample'})-[:TARGETS]->(t:Target) "
        "RETURN count(DISTINCT [elementId(p), elementId(t)]) AS n")
    # no dense seeds: the walk alone, from the names of the nearest claims, reaches the chunks
    walker = PPRRetriever(driver, embedder, graph, db, corpus="sample", facts=3, passage_weight=0.0)
    result = walker.search(QUESTION, top_k=4)
    walk = result.diagnostic(PPRWalk)
    assert len(walk.facts) == 3 and walk.seeded_chunks == 0 and walk.iterations > 1
    assert 2 <= len(walk.seeds) <= 6 and walk.top_names
    scores = [c.score for c in result.hops[0].chunks]
    assert scores == sorted(scores, reverse=True) and [c.rank for c in result.hops[0].chunks] == [1, 2, 3, 4][:len(scores)]
    assert len({c.document_id for c in result.hops[0].chunks}) >= 2     # names shared across articles bridge them
    # a chunk the walk ranks holds a seeded name or is one edge from one (damping 0.5 keeps it near)
    seeded = {s["node"] for s in walk.seeds}
    holders = driver.execute_query(
        "MATCH (c:Chunk)-[:HAS_CLAIM]->(:Claim)-[:ABOUT|TARGETS]->(n) WHERE elementId(n) IN $seeded "
        "RETURN collect(DISTINCT c.id) AS ids", seeded=sorted(seeded), database_=db).records[0]["ids"]
    assert result.hops[0].chunks[0].chunk_id in holders
    # damping 0: the walk never leaves its seeds, so the chunks rank as their dense seeds, the
    # vector ranking (the nearest chunk's min-max normalised score is the largest)
    nearest = driver.execute_query(
        "MATCH (c:Chunk {corpus: 'sample'}) RETURN c.id AS id ORDER BY vector.similarity.cosine(c.embedding, $q) DESC "
        "LIMIT 1", q=[float(x) for x in embedder.embed_query(QUESTION)], database_=db).records[0]["id"]
    for candidates in (0, 20):     # every chunk's embedding in memory, or the vector index's nearest 20
        dense = PPRRetriever(driver, embedder, graph, db, corpus="sample", facts=1, candidates=candidates,
                             damping=0.0).search(QUESTION, top_k=2)
        assert dense.hops[0].chunks[0].chunk_id == nearest
        assert dense.diagnostic(PPRWalk).seeded_chunks == min(candidates or chunks, chunks) - 1   # min-max: one is 0
    without = ClaimGraph.load(driver, db, "sample")
    assert without.chunk_vectors is None
    with pytest.raises(MhgraphError, match="only from a graph read with its embeddings"):
        PPRRetriever(driver, embedder, without, db, corpus="sample", candidates=0).search(QUESTION)


def test_ppr_metadata_seeds_favour_the_named_sources_within_the_named_dates(sample_built, settings, embedder) -> None:
    from mhgraph.filters.extractors import build_extractor
    from mhgraph.retrieval.ppr import PPRRetriever
    from mhgraph.traversal.claim_graph import ClaimGraph
    from mhgraph.traversal.diagnostics import PPRWalk

    driver, _ = sample_built
    db = settings.neo4j_database
    graph = ClaimGraph.load(driver, db, "sample")
    extractor = build_extractor("rules", driver, db, "sample")

    def stored(source: str | None = None, month: tuple[str, str] | None = None) -> set[str]:
        """The sample's chunk ids of `source` (any if None) published within `month` (any time if None)."""
        start, end = month or (None, None)
        return set(driver.execute_query(
            "MATCH (c:Chunk {corpus: 'sample'}) WHERE ($source IS NULL OR c.source = $source) "
            "AND ($start IS NULL OR (c.published_at >= datetime($start) AND c.published_at < datetime($end))) "
            "RETURN collect(c.id) AS ids", source=source, start=start, end=end, database_=db).records[0]["ids"])

    def walk(question: str, **kw) -> tuple[list, PPRWalk]:
        # damping 0 and no dense seeds: a chunk's score is its metadata seed alone
        result = PPRRetriever(driver, embedder, graph, db, corpus="sample", facts=1, passage_weight=0.0,
                              damping=0.0, extractor=extractor, **kw).search(question, top_k=100)
        return result.hops[0].chunks, result.diagnostic(PPRWalk)

    november = ("2023-11-01T00:00:00Z", "2023-12-01T00:00:00Z")
    courtside, courtside_november = stored("Courtside Daily"), stored("Courtside Daily", november)
    assert courtside > courtside_november > set()     # the sample has the source's chunks in and out of November
    chunks, w = walk("What did Courtside Daily report about the club's manager?", metadata_weight=1.0)
    assert w.metadata["filter"] == {"source": ["Courtside Daily"]} and w.metadata["seeded"] == {"Courtside Daily": len(courtside)}
    assert {c.chunk_id for c in chunks} == courtside                   # exactly the named source's chunks
    assert max(c.score for c in chunks) == pytest.approx(min(c.score for c in chunks))   # spread evenly
    chunks, w = walk("What did Courtside Daily report in November 2023 about the club's manager?", metadata_weight=1.0)
    assert w.metadata["seeded"] == {"Courtside Daily": len(courtside_november)}
    assert {c.chunk_id for c in chunks} == courtside_november
    # dates without a source: the chunks of those dates, any source
    chunks, w = walk("Which articles were published in November 2023 about a manager?", metadata_weight=1.0)
    assert w.metadata["seeded"] == {"any source": len(stored(month=november))}
    assert {c.chunk_id for c in chunks} == stored(month=november)
    # two sources: each spreads the whole weight over its own chunks, so the smaller one's chunks weigh more
    chunks, w = walk("Did Courtside Daily report the transfer before Harbor Ledger did?", metadata_weight=1.0)
    harbor = stored("Harbor Ledger")
    assert w.metadata["seeded"] == {"Courtside Daily": len(courtside), "Harbor Ledger": len(harbor)}
    score = {c.chunk_id: c.score for c in chunks}
    assert sum(score[c] for c in courtside) == pytest.approx(sum(score[c] for c in harbor))
    # with the names and dense seeds and the walk: the seeds move the walk's mass onto the named
    # source; naming none, or weight 0, changes nothing
    default = {"facts": 3, "passage_weight": 0.5}
    named_question = "What did Courtside Daily report about the club's manager?"

    def on_courtside(retriever: PPRRetriever) -> float:
        return sum(c.score for c in retriever.search(named_question, top_k=200).hops[0].chunks if c.chunk_id in courtside)

    seeded = PPRRetriever(driver, embedder, graph, db, corpus="sample", extractor=extractor, metadata_weight=32.0, **default)
    plain = PPRRetriever(driver, embedder, graph, db, corpus="sample", **default)
    assert on_courtside(seeded) > 2 * on_courtside(plain)
    assert all(c.chunk_id in courtside for c in seeded.search(named_question, top_k=3).hops[0].chunks)
    off = PPRRetriever(driver, embedder, graph, db, corpus="sample", extractor=extractor, metadata_weight=0.0, **default)
    ranked = [(c.chunk_id, c.score) for c in plain.search(named_question, top_k=5).hops[0].chunks]
    assert [(c.chunk_id, c.score) for c in off.search(named_question, top_k=5).hops[0].chunks] == ranked
    unnamed = seeded.search(QUESTION, top_k=5)
    assert unnamed.diagnostic(PPRWalk).metadata["seeded"] == {} and plain.search(QUESTION).diagnostic(PPRWalk).metadata is None
    assert [(c.chunk_id, c.score) for c in unnamed.hops[0].chunks] == \
        [(c.chunk_id, c.score) for c in plain.search(QUESTION, top_k=5).hops[0].chunks]
    assert seeded.params["metadata_weight"] == 32.0 and plain.params["metadata_weight"] == 0.0
    assert off.params["metadata_weight"] == 0.0


def test_ppr_command_errors_name_the_missing_layer(settings, empty_graph, tmp_path) -> None:
    env = {"MHGRAPH_CACHE_DIR": str(tmp_path / "cache"), "MHGRAPH_LLM_BACKEND": "none"}
    assert run_cli(settings, "ingest", "--no-progress", env=env).returncode == 0
    result = run_cli(settings, "query", "Who recalled robots?", "-m", "ppr", env=env)
    assert result.returncode == 1
    assert result.stderr.strip() == "error: corpus 'sample' has no claims: run 'mhgraph claims build --corpus sample' first"
    assert run_cli(settings, "claims", "build", "--no-progress", env=env).returncode == 0
    empty_graph.execute_query("MATCH (c:Corpus {name: 'sample'}) REMOVE c.synonym_threshold",
                              database_=settings.neo4j_database)
    result = run_cli(settings, "query", "Who recalled robots?", "-m", "ppr", env=env)
    assert result.returncode == 1
    assert result.stderr.strip() == ("error: corpus 'sample' has no synonym edges between its names: run 'mhgraph "
                                     "claims synonyms --corpus sample' first (claims build does it for a new layer)")
    linked = run_cli(settings, "claims", "synonyms", "--neighbours", "5", env=env)
    assert linked.returncode == 0, linked.stderr
    assert re.search(r"synonyms +\d+ edges between \d+ topic and target names \(cosine >= 0.80, at most 5 per name\)",
                     linked.stdout)
    found = run_cli(settings, "query", "Who recalled robots?", "-m", "ppr", "--ppr-facts", "3", env=env)
    assert found.returncode == 0, found.stderr
    assert "seed facts (3):" in found.stdout and "walk's top names:" in found.stdout
    assert "metadata seeds: none named" in found.stdout      # on by default; this question names no source


def test_ppr_eval_traces_and_browser_walk(settings, empty_graph, tmp_path) -> None:
    from mhgraph import cypher

    env = {"MHGRAPH_CACHE_DIR": str(tmp_path / "cache"), "MHGRAPH_LLM_BACKEND": "none"}
    assert run_cli(settings, "ingest", "--no-progress", "--claims", env=env).returncode == 0
    result = run_cli(settings, "eval", "--sample", "-m", "ppr", "-k", "4", "--limit", "5", "--run-id", "ppr-run",
                     "--no-progress", "--runs-dir", str(tmp_path / "runs"), env=env)
    assert result.returncode == 0, result.stderr
    run_dir = eval_run_dir(result.stdout)
    results = json.loads((run_dir / "results.json").read_text())
    report = (run_dir / "report.md").read_text()
    assert "## Graph traversal (personalized PageRank)" in report
    db = settings.neo4j_database
    facts = empty_graph.execute_query("MATCH (:Question)-[s:SEED_FACT {run: 'ppr-run'}]->(:Claim) RETURN count(s) AS n",
                                      database_=db).records[0]["n"]
    assert facts == sum(len(r["facts"]) for r in results) > 0
    question = next(r for r in results if r["seeds"])
    drawn = empty_graph.execute_query(cypher.load("browser/ppr_walk"), run="ppr-run", question=question["id"],
                                      database_=db).records[0]
    roles = [w.relationships[0]["role"] for w in drawn["walked"]]
    assert roles.count("seed") == len(question["seeds"]) and roles.count("visited") == len(question["top_names"])
    assert len(drawn["retrieved"]) == len(question["retrieved"]) if "retrieved" in question else drawn["retrieved"]
    assert run_cli(settings, "eval", "--delete-run", "ppr-run", env=env).returncode == 0
    left = empty_graph.execute_query("MATCH ()-[u:SEED_FACT|WALKED {run: 'ppr-run'}]->() RETURN count(u) AS n",
                                     database_=db).records[0]["n"]
    assert left == 0

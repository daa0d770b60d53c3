"""Several named corpora in one graph: ingest keeps them apart, retrieval and evaluation search one,
`mhgraph corpora` lists them and deleting one removes exactly its nodes."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from mhgraph.config import check_corpus_name
from mhgraph.errors import MhgraphError
from mhgraph.eval import traces
from mhgraph.eval.runner import EvalOptions, evaluate
from mhgraph.graph.corpora import list_corpora, resolve_corpus
from mhgraph.ingest.pipeline import default_corpus_name, default_corpus_names, ingest_corpus
from mhgraph.retrieval import build_retriever, registry
from tests.conftest import SAMPLE, run_cli
from tests.graph_state import snapshot

QUESTION = "Which company recalled its Atlas Home robots over battery fire risk?"
# methods that read the claim layer (compose: its default pipeline expands with ppr)
NEEDS_CLAIMS = {"claims", "ppr", "compose"}


@pytest.fixture(scope="module")
def two_corpora(driver, settings, server, tmp_path_factory):
    """The bundled sample as 'sample', and a rewritten copy of six of its articles as 'other'
    (same titles and sources, other bodies), with the snapshot of the graph before 'other'."""
    from mhgraph.embeddings.sentence import SentenceEmbedder
    from tests.conftest import wipe

    wipe(driver, settings.neo4j_database)
    embedder = SentenceEmbedder()
    ingest_corpus(SAMPLE / "corpus.json", settings, driver, embedder=embedder, progress=False)
    before = snapshot(driver, settings.neo4j_database)
    articles = json.loads((SAMPLE / "corpus.json").read_text())[:6]
    for a in articles:
        a["body"] = f"Other corpus edition. {a['body']} Recall of robots, again, in the other corpus."
    path = tmp_path_factory.mktemp("other") / "other.json"
    path.write_text(json.dumps(articles))
    ingest_corpus(path, settings, driver, embedder=embedder, progress=False)
    return {"before": before, "other_path": path, "embedder": embedder}


def test_default_names() -> None:
    assert default_corpus_name("/data/multihop-rag/corpus.json") == "multihop-rag"
    assert default_corpus_name("/data/multihop-rag/corpus.txt") == "multihop-rag"
    assert default_corpus_name("/tmp/news 2023.json") == "news-2023"
    assert default_corpus_name("/x/_private.json") == "private"
    assert default_corpus_names("/data/news/corpus.json") == ["news", "news-json"]
    # a long file name: both names stay valid corpus names (the second was 105 characters)
    long = default_corpus_names(f"/x/{'a' * 120}.json")
    assert [len(n) for n in long] == [100, 100] and long[1].endswith("-json")
    assert all(check_corpus_name(n) for n in long)


def test_each_corpus_keeps_its_own_nodes(two_corpora, driver, settings) -> None:
    found = {c.name: c for c in list_corpora(driver, settings.neo4j_database)}
    assert set(found) == {"sample", "other"}
    assert found["sample"].documents == 18 and found["other"].documents == 6
    assert found["other"].files == (str(two_corpora["other_path"].resolve()),)
    rows, _, _ = driver.execute_query(
        "MATCH (c:Chunk)-[:FROM_DOCUMENT]->(d:Document)-[:IN_CORPUS]->(k:Corpus) "
        "RETURN k.name AS k, count(DISTINCT d) AS d, count(c) AS c, "
        "sum(CASE WHEN c.corpus = k.name AND d.corpus = k.name THEN 1 ELSE 0 END) AS labelled ORDER BY k")
    assert [(r["k"], r["d"], r["c"] == r["labelled"]) for r in rows] == [("other", 6, True), ("sample", 18, True)]
    assert sum(r["c"] for r in rows) == found["sample"].chunks + found["other"].chunks


@pytest.mark.parametrize("method", registry.names())
def test_retrieval_is_confined_to_one_corpus(method, two_corpora, driver, settings) -> None:
    if method in NEEDS_CLAIMS:   # the claim layer of each corpus first (offline: spaCy)
        from mhgraph.claims.build import build_claims
        from mhgraph.claims.extract import OfflineClaimExtractor

        for corpus in ("sample", "other"):
            build_claims(driver, settings.neo4j_database, corpus, OfflineClaimExtractor(), two_corpora["embedder"],
                         progress=False)
    try:
        for corpus in ("sample", "other"):
            retriever = build_retriever(method, driver, replace(settings, corpus=corpus),
                                        embedder=two_corpora["embedder"])
            result = retriever.search(QUESTION, top_k=10)
            # claims: hop 1 holds the chunks of the best 10 claims, often fewer chunks than claims
            ids = [c.chunk_id for h in result.hops for c in h.chunks]
            assert ids if method == "claims" else len(result.hops[0].chunks) == 10
            assert result.params["corpus"] == corpus
            rows, _, _ = driver.execute_query(
                "UNWIND $ids AS id MATCH (c:Chunk {id: id}) RETURN DISTINCT c.corpus AS k", ids=ids)
            assert [r["k"] for r in rows] == [corpus]
    finally:   # the module's graph as it was (its other tests compare snapshots)
        driver.execute_query("MATCH (n) WHERE n:Claim OR n:Topic OR n:Target DETACH DELETE n")
        driver.execute_query("MATCH (c:Chunk) REMOVE c.claims_by")
        driver.execute_query("MATCH (k:Corpus) REMOVE k.synonym_threshold, k.synonym_neighbours, k.synonym_edges")


def test_no_corpus_named_on_a_graph_with_two_stops(two_corpora, driver, settings, tmp_path) -> None:
    with pytest.raises(MhgraphError, match=r"holds 2 corpora \(other, sample\): choose one with --corpus"):
        resolve_corpus(driver, settings.neo4j_database, None)
    options = EvalOptions(method="vector", questions_path=SAMPLE / "questions.json", top_k=4, progress=False,
                          runs_dir=tmp_path, trace=False)
    with pytest.raises(MhgraphError, match="holds 2 corpora"):
        evaluate(settings, driver, options, embedder=two_corpora["embedder"])
    proc = run_cli(settings, "eval", "--method", "bm25", "--sample", "--corpus", "nope", "--no-progress")
    assert proc.returncode == 1 and proc.stderr.strip().splitlines() == [
        "error: no corpus 'nope' in the graph (corpora: other, sample; see 'mhgraph corpora')"]


def test_eval_on_a_named_corpus_scores_its_own_chunks(two_corpora, driver, settings, tmp_path) -> None:
    options = EvalOptions(method="bm25", questions_path=SAMPLE / "questions.json", top_k=4, progress=False,
                          runs_dir=tmp_path, run_id="corpus-sample", trace=True)
    run = evaluate(replace(settings, corpus="sample"), driver, options, embedder=two_corpora["embedder"])
    assert run.summary["corpus"] == "sample" and run.summary["params"]["corpus"] == "sample"
    results = json.loads((run.run_dir / "results.json").read_text())
    gold = sorted({g for r in results for g in r["gold"]})
    rows, _, _ = driver.execute_query("UNWIND $ids AS id MATCH (c:Chunk {id: id}) RETURN DISTINCT c.corpus AS k",
                                      ids=gold)
    assert gold and [r["k"] for r in rows] == ["sample"]
    assert run.coverage.matched == run.coverage.facts == 43   # as on a graph holding the sample alone
    rows, _, _ = driver.execute_query("MATCH (r:EvalRun {id: 'corpus-sample'}) RETURN r.corpus AS k")
    assert rows[0]["k"] == "sample"


def test_cli_lists_corpora_and_query_names_the_corpus(two_corpora, settings) -> None:
    listed = run_cli(settings, "corpora")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0].split()[:4] == ["corpus", "documents", "chunks", "sources"]
    assert [line.split()[:2] for line in lines[1:]] == [["other", "6"], ["sample", "18"]]
    asked = run_cli(settings, "query", QUESTION, "--method", "bm25", "-k", "2", "--corpus", "other")
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout.startswith("bm25 on corpus 'other': 1 hop(s)")


def test_a_default_name_taken_by_another_file(two_corpora, driver, settings, tmp_path) -> None:
    """corpus.txt beside corpus.json would get the same default name: it gets the extension too; a
    third file whose names are both taken is refused and nothing is written."""
    flat = tmp_path / "sample" / "corpus.txt"
    flat.parent.mkdir()
    flat.write_text((SAMPLE / "corpus.txt").read_text())
    proc = run_cli(settings, "ingest", str(flat), "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"ingested {flat} (flat) as corpus 'sample-txt'")
    again = run_cli(settings, "ingest", str(flat), "--no-progress")   # the same file: same corpus, idempotent
    assert again.returncode == 0 and "as corpus 'sample-txt'" in again.stdout and "(added 0, replaced 0, unchanged 18, removed 0;" in again.stdout

    third = tmp_path / "elsewhere" / "sample" / "corpus.txt"
    third.parent.mkdir(parents=True)
    third.write_text(flat.read_text())
    state = snapshot(driver, settings.neo4j_database)
    proc = run_cli(settings, "ingest", str(third), "--no-progress")
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        f"error: the default corpus names for corpus.txt are taken ('sample' holds {(SAMPLE / 'corpus.json').resolve()}; "
        f"'sample-txt' holds {flat}): name this corpus with --corpus NAME (or pass --corpus sample to add the file "
        "to it)"]
    assert snapshot(driver, settings.neo4j_database) == state
    assert run_cli(settings, "corpora", "delete", "sample-txt").returncode == 0


@pytest.mark.parametrize("command, name", [("query", "no spaces"), ("ingest", "")])
def test_invalid_corpus_name_is_one_line(settings, command, name) -> None:
    # an empty name is refused too, not read as unset (ingest would name the corpus after its file)
    proc = run_cli(settings, command, "x" if command == "query" else str(SAMPLE / "corpus.json"), "--corpus", name)
    assert proc.returncode == 1 and proc.stderr.strip().splitlines() == [
        f"error: setting 'corpus' from flag: {name!r} is not a corpus name (1-100 letters, digits, '.', '_' or '-', "
        "starting with a letter or digit)"]


def test_deleting_a_corpus_removes_exactly_its_nodes(two_corpora, driver, settings) -> None:
    # an evaluation run on 'other' goes with it; a run on 'sample' stays
    for corpus in ("other", "sample"):
        proc = run_cli(settings, "eval", "--method", "bm25", "--sample", "--corpus", corpus, "--run-id",
                       f"on-{corpus}", "--no-progress", "--runs-dir", str(two_corpora["other_path"].parent))
        assert proc.returncode == 0, proc.stderr
    chunks = {c.name: c.chunks for c in list_corpora(driver, settings.neo4j_database)}["other"]
    # and its claim layer goes with it
    from mhgraph.claims.build import build_claims
    from mhgraph.claims.extract import OfflineClaimExtractor

    built = build_claims(driver, settings.neo4j_database, "other", OfflineClaimExtractor(), two_corpora["embedder"],
                         progress=False)
    assert built.claims > 0
    proc = run_cli(settings, "corpora", "delete", "other")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"deleted corpus other: 6 documents, {chunks} chunks, 1 evaluation run"
    indexes = {r["name"] for r in driver.execute_query("SHOW FULLTEXT INDEXES YIELD name").records}
    assert "chunk_text_sample" in indexes and "chunk_text_other" not in indexes   # dropped with its corpus
    rows, _, _ = driver.execute_query("MATCH (r:EvalRun) RETURN r.id AS id, r.corpus AS corpus")
    assert "on-sample" in [r["id"] for r in rows] and {r["corpus"] for r in rows} == {"sample"}
    for r in rows:  # the graph as it was before 'other', runs on 'sample' aside
        traces.delete_run(driver, settings.neo4j_database, r["id"])
    assert snapshot(driver, settings.neo4j_database) == two_corpora["before"]
    left, _, _ = driver.execute_query("MATCH (n) WHERE n:Claim OR n:Topic OR n:Target RETURN count(n) AS n")
    assert left[0]["n"] == 0
    again = run_cli(settings, "corpora", "delete", "other")
    assert again.returncode == 1 and again.stderr.strip() == \
        "error: no corpus 'other' in the graph (see 'mhgraph corpora')"


def test_documents_from_before_corpus_names(driver, settings, server, embedder) -> None:
    """A graph written by an older mhgraph (Documents without a corpus) is named in the error and
    can be removed with --unnamed."""
    from tests.conftest import wipe

    wipe(driver, settings.neo4j_database)
    ingest_corpus(SAMPLE / "corpus.json", settings, driver, embedder=embedder, progress=False)
    driver.execute_query("MATCH (d:Document) WITH d LIMIT 3 MATCH (c:Chunk)-[:FROM_DOCUMENT]->(d) "
                         "REMOVE c.corpus, d.corpus")
    with pytest.raises(MhgraphError, match="ingested before corpora had names"):
        resolve_corpus(driver, settings.neo4j_database, None)
    proc = run_cli(settings, "corpora", "delete", "--unnamed")
    assert proc.returncode == 0 and proc.stdout.startswith("deleted corpus (unnamed): 3 documents"), proc.stderr
    assert resolve_corpus(driver, settings.neo4j_database, None) == "sample"
    assert {c.name: c.documents for c in list_corpora(driver, settings.neo4j_database)} == {"sample": 15}

"""Documents change after ingest (issue 27), against the real server: a new version replaces the
old everywhere, a delete leaves no orphan, a killed ingest leaves whole documents and a re-run
converges on a clean ingest, a bridge goes with one of its documents, every method's results on a
corpus ignore the other corpora, runs that saw a changed document are marked stale and keep their
results, and a trained model is told the corpus changed."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import warnings
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from mhgraph import cypher
from mhgraph.claims.build import build_claims
from mhgraph.claims.extract import OfflineClaimExtractor
from mhgraph.errors import InputError, MhgraphError
from mhgraph.graph.documents import changes_since, corpus_facts, warn_if_changed
from mhgraph.rerank.models import warn_of_training
from mhgraph.ingest.pipeline import ingest_corpus
from mhgraph.retrieval import build_retriever, registry
from tests.conftest import SAMPLE, cli_env, run_cli, wipe
from tests.graph_state import snapshot

ARTICLES = json.loads((SAMPLE / "corpus.json").read_text())
NEW_BODY = ("The Quillmark Observatory said its zephyr telescope will map the Andromeda halo in 2031. "
            "Engineers at Quillmark praised the telescope's cooling system, built by Harrowgate Optics.")
QUESTIONS = ["Which company recalled its Atlas Home robots over battery fire risk?",
             "What did the central bank decide about interest rates?",
             "Quillmark zephyr telescope Andromeda halo"]
# what may hang without relationships: nothing but a Corpus (a corpus whose last document went)
ORPHANS = """
MATCH (n)
WHERE (n:Document AND NOT (n)-[:IN_CORPUS]->(:Corpus))
   OR (n:Chunk AND NOT (n)-[:FROM_DOCUMENT]->(:Document))
   OR (n:Claim AND NOT (:Chunk)-[:HAS_CLAIM]->(n))
   OR ((n:Topic OR n:Target) AND NOT (:Claim)-[:ABOUT|TARGETS]->(n))
   OR (n:Source AND NOT (:Document)-[:PUBLISHED_BY]->(n))
   OR (n:Retired AND NOT (n)--())
   OR (NOT n:Corpus AND NOT (n)--())
RETURN labels(n) AS labels, coalesce(n.id, n.name, n.key) AS id
"""


def write(path: Path, articles: list[dict]) -> Path:
    path.write_text(json.dumps(articles), encoding="utf-8")
    return path


def changed(articles: list[dict], index: int, body: str = NEW_BODY) -> list[dict]:
    return [dict(a, body=body) if i == index else a for i, a in enumerate(articles)]


def rows(driver, query: str, **params) -> list[dict]:
    return [r.data() for r in driver.execute_query(query, params).records]


def ingest(path: Path, settings, driver, embedder, corpus: str = "news", **more):
    return ingest_corpus(path, replace(settings, corpus=corpus, **more), driver, embedder=embedder, progress=False)


def claims(driver, settings, embedder, corpus: str = "news"):
    return build_claims(driver, settings.neo4j_database, corpus, OfflineClaimExtractor(), embedder, progress=False)


def rankings(driver, settings, embedder, corpus: str) -> dict[str, list[list[tuple[str, float]]]]:
    """Every method's (chunk id, score) lists for QUESTIONS on `corpus`."""
    found = {}
    for method in registry.names():
        retriever = build_retriever(method, driver, replace(settings, corpus=corpus), embedder=embedder)
        found[method] = [[(c.chunk_id, round(c.score, 6)) for h in retriever.search(q, top_k=8).hops for c in h.chunks]
                         for q in QUESTIONS]
    return found


def test_a_changed_article_replaces_the_old_version_everywhere(empty_graph, settings, embedder, tmp_path) -> None:
    driver = empty_graph
    path = write(tmp_path / "news.json", ARTICLES)
    ingest(path, settings, driver, embedder)
    claims(driver, settings, embedder)
    old = ARTICLES[0]
    old_sentence = old["body"].split(". ")[0]
    old_chunks = {r["id"] for r in rows(driver, "MATCH (c:Chunk)-[:FROM_DOCUMENT]->(d:Document {key: $k}) "
                                                "RETURN c.id AS id", k=old["url"])}
    old_claims = rows(driver, "MATCH (c:Chunk)-[:HAS_CLAIM]->(k) WHERE c.id IN $ids RETURN count(k) AS n",
                      ids=sorted(old_chunks))[0]["n"]
    assert old_chunks and old_claims > 0
    write(path, changed(ARTICLES, 0))
    proc = run_cli(replace(settings, corpus="news"), "ingest", str(path), "--corpus", "news", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "(added 0, replaced 1, unchanged 17, removed 0;" in proc.stdout
    assert f"removed   old versions' {len(old_chunks)} chunks, {old_claims} claims" in proc.stdout
    # the corpus kept its claim layer whole: the new version's chunks got theirs
    assert "claims of corpus 'news'" in proc.stdout
    docs = rows(driver, "MATCH (d:Document {corpus: 'news', key: $k}) RETURN d.version AS v, d.title AS t",
                k=old["url"])
    assert len(docs) == 1 and docs[0]["t"] == old["title"]
    assert rows(driver, "MATCH (c:Chunk) WHERE c.id IN $ids RETURN count(c) AS n", ids=sorted(old_chunks))[0]["n"] == 0
    assert rows(driver, "MATCH (n) WHERE n.text CONTAINS $s RETURN count(n) AS n", s=old_sentence)[0]["n"] == 0
    assert rows(driver, "MATCH (c:Chunk {corpus: 'news'}) WHERE c.claims_by IS NULL RETURN count(c) AS n")[0]["n"] == 0
    assert rows(driver, ORPHANS) == []
    # no method finds the old text; the new one is found
    for method, lists in rankings(driver, settings, embedder, "news").items():
        texts = rows(driver, "UNWIND $ids AS id MATCH (c:Chunk {id: id}) RETURN c.text AS t",
                     ids=[cid for ranked in lists for cid, _ in ranked])
        assert not any(old_sentence in r["t"] for r in texts), method
        assert not old_chunks & {cid for ranked in lists for cid, _ in ranked}, method
    for method in ("vector", "bm25"):
        top = build_retriever(method, driver, replace(settings, corpus="news"), embedder=embedder).search(
            QUESTIONS[2], top_k=1).hops[0].chunks[0]
        assert "Quillmark" in top.text, method


def test_an_ingest_extracts_the_claims_of_what_it_wrote_and_only_that(empty_graph, settings, embedder,
                                                                      tmp_path) -> None:
    driver = empty_graph
    pending = "MATCH (c:Chunk {corpus: $corpus}) WHERE c.claims_by IS NULL RETURN c.id AS id"
    # a corpus of one article: its replacement leaves no chunk that had claims, and the layer is kept
    solo = write(tmp_path / "solo.json", ARTICLES[:1])
    ingest(solo, settings, driver, embedder, corpus="solo")
    claims(driver, settings, embedder, corpus="solo")
    write(solo, changed(ARTICLES[:1], 0))
    proc = run_cli(replace(settings, corpus="solo"), "ingest", str(solo), "--corpus", "solo", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "claims of corpus 'solo'" in proc.stdout
    assert rows(driver, pending, corpus="solo") == []
    assert rows(driver, "MATCH (k:Claim {corpus: 'solo'}) WHERE k.text CONTAINS 'Quillmark' RETURN count(k) AS n"
                )[0]["n"] > 0
    # a build stopped after 3 chunks: an ingest extracts the chunks it wrote, not the ones the build left
    path = write(tmp_path / "news.json", ARTICLES)
    ingest(path, settings, driver, embedder)
    build_claims(driver, settings.neo4j_database, "news", OfflineClaimExtractor(), embedder, limit=3, progress=False)
    left = {r["id"] for r in rows(driver, pending, corpus="news")}
    target = ARTICLES[len(ARTICLES) - 1]
    target_chunks = {r["id"] for r in rows(driver, "MATCH (c:Chunk)-[:FROM_DOCUMENT]->(:Document {key: $k}) "
                                                    "RETURN c.id AS id", k=target["url"])}
    assert left and target_chunks <= left
    write(path, changed(ARTICLES, len(ARTICLES) - 1))
    proc = run_cli(replace(settings, corpus="news"), "ingest", str(path), "--corpus", "news", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert {r["id"] for r in rows(driver, pending, corpus="news")} == left - target_chunks
    # a corpus with no claim layer gets none
    plain = write(tmp_path / "plain.json", ARTICLES[:2])
    ingest(plain, settings, driver, embedder, corpus="plain")
    write(plain, changed(ARTICLES[:2], 1))
    proc = run_cli(replace(settings, corpus="plain"), "ingest", str(plain), "--corpus", "plain", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "replaced 1" in proc.stdout and "claims of corpus" not in proc.stdout
    assert rows(driver, "MATCH (k:Claim {corpus: 'plain'}) RETURN count(k) AS n")[0]["n"] == 0


def test_a_delete_leaves_no_orphan_and_equals_an_ingest_without_it(empty_graph, settings, embedder, tmp_path) -> None:
    driver = empty_graph
    without = write(tmp_path / "without.json", ARTICLES[:5] + ARTICLES[6:])
    ingest(without, settings, driver, embedder)
    expected = snapshot(driver, settings.neo4j_database)
    wipe(driver, settings.neo4j_database)
    full = write(without, ARTICLES)   # the same file: the corpus records the files it was ingested from
    ingest(full, settings, driver, embedder)
    claims(driver, settings, embedder)
    proc = run_cli(settings, "documents", "delete", "--corpus", "news", "--key", ARTICLES[5]["url"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("deleted 1 document of corpus 'news'")
    assert rows(driver, ORPHANS) == []
    assert rows(driver, "MATCH (d:Document {key: $k}) RETURN count(d) AS n", k=ARTICLES[5]["url"])[0]["n"] == 0
    # the lexical graph is a clean ingest of the other 17 (claims apart: the snapshot is the lexical graph)
    driver.execute_query("MATCH (n) WHERE n:Claim OR n:Topic OR n:Target DETACH DELETE n")
    driver.execute_query("MATCH (k:Corpus) REMOVE k.synonym_threshold, k.synonym_neighbours, k.synonym_edges")
    assert snapshot(driver, settings.neo4j_database) == expected
    again = run_cli(settings, "documents", "delete", "--corpus", "news", "--key", ARTICLES[5]["url"])
    assert again.returncode == 1 and again.stderr.strip().splitlines() == [
        f"error: corpus 'news' has no document with key {ARTICLES[5]['url']!r} (see 'mhgraph documents list "
        "--corpus news')"]
    listed = run_cli(settings, "documents", "list", "--corpus", "news")
    assert listed.returncode == 0 and listed.stdout.strip().endswith("17 documents in corpus 'news'")
    # each key whole, as show and delete take it
    assert {line.split()[0] for line in listed.stdout.splitlines()[1:-1]} == \
        {a["url"] for n, a in enumerate(ARTICLES) if n != 5}
    shown = run_cli(settings, "documents", "show", "--corpus", "news", "--key", ARTICLES[0]["url"])
    assert shown.returncode == 0 and f"title           {ARTICLES[0]['title']}" in shown.stdout
    # --file: every document of a file ("this feed was withdrawn"), even when the file is gone
    full.unlink()
    proc = run_cli(settings, "documents", "delete", "--corpus", "news", "--file", str(full))
    assert proc.returncode == 0 and proc.stdout.startswith("deleted 17 documents of corpus 'news'")
    assert rows(driver, "MATCH (n) WHERE NOT n:Corpus RETURN count(n) AS n")[0]["n"] == 0


def test_bm25_scores_do_not_remember_removed_versions(empty_graph, settings, embedder, tmp_path) -> None:
    """Lucene counts removed chunks in its term statistics until its segments merge: the corpus's
    fulltext index is rebuilt after a change that removed chunks, so replacing an article and
    restoring it, or deleting it and ingesting it again, gives back the very same BM25 scores."""
    driver = empty_graph
    path = write(tmp_path / "news.json", ARTICLES)
    ingest(path, settings, driver, embedder)
    bm25 = build_retriever("bm25", driver, replace(settings, corpus="news"))

    def scores():
        return [[(c.chunk_id, c.score) for c in bm25.search(q, top_k=10).hops[0].chunks] for q in QUESTIONS]

    first = scores()
    for index in (0, 3):
        assert ingest(write(path, changed(ARTICLES, index)), settings, driver, embedder).reindex_seconds > 0
        assert ingest(write(path, ARTICLES), settings, driver, embedder).replaced == 1
    assert scores() == first
    proc = run_cli(settings, "documents", "delete", "--corpus", "news", "--key", ARTICLES[2]["url"])
    assert proc.returncode == 0 and "fulltext index rebuilt in" in proc.stdout
    assert ingest(path, settings, driver, embedder).added == 1
    assert scores() == first


def test_a_bridge_goes_with_one_of_its_documents(empty_graph, settings, embedder, tmp_path) -> None:
    driver = empty_graph
    ingest(write(tmp_path / "news.json", ARTICLES), settings, driver, embedder)
    claims(driver, settings, embedder)
    bridge = rows(driver, """
        MATCH (t:Target {corpus: 'news'})<-[:TARGETS]-(k:Claim)
        WITH t, collect(DISTINCT k.document_id) AS docs WHERE size(docs) = 2
        RETURN elementId(t) AS id, docs ORDER BY t.key LIMIT 1""")[0]
    gone, kept = bridge["docs"]
    others = {r["id"] for r in rows(driver, "MATCH (k:Claim) WHERE k.document_id <> $d RETURN k.id AS id", d=gone)}
    key = rows(driver, "MATCH (d:Document {id: $d}) RETURN d.key AS k", d=gone)[0]["k"]
    # two ppr-like runs whose traces reach names only: one walked a name only `gone`'s claims use
    # (it goes with them), the other walked the bridge (it stays)
    lone = rows(driver, """
        MATCH (t:Target {corpus: 'news'})<-[:TARGETS]-(k:Claim)
        WITH t, collect(DISTINCT k.document_id) AS docs WHERE docs = [$d]
        RETURN elementId(t) AS id ORDER BY t.key LIMIT 1""", d=gone)[0]["id"]
    for run, node in (("walked-lone", lone), ("walked-bridge", bridge["id"])):
        rows(driver, "CREATE (:EvalRun {id: $run, corpus: 'news'})-[:ASKED]->(:Question {id: $run + '-q'})", run=run)
        rows(driver, cypher.load("eval/write_walk"), run=run,
             rows=[{"question": f"{run}-q", "node": node, "role": "visited", "weight": 0.5, "rank": 1}])
    proc = run_cli(settings, "documents", "delete", "--corpus", "news", "--key", key)
    assert proc.returncode == 0, proc.stderr
    assert "marked stale: 1 evaluation run whose traces reach them (walked-lone)" in proc.stdout
    assert rows(driver, "MATCH (r:EvalRun) RETURN r.id AS id, r.stale AS stale, r.stale_keys AS keys ORDER BY id") == [
        {"id": "walked-bridge", "stale": None, "keys": None}, {"id": "walked-lone", "stale": True, "keys": [key]}]
    assert rows(driver, "MATCH (:Question)-[:WALKED {run: 'walked-lone'}]->(t) RETURN labels(t) AS labels") == [
        {"labels": ["Retired", "RetiredTarget"]}]   # the trace keeps what it walked, out of the graph
    left = rows(driver, "MATCH (t)<-[:TARGETS]-(k:Claim) WHERE elementId(t) = $t "
                        "RETURN collect(DISTINCT k.document_id) AS docs", t=bridge["id"])
    assert left == [{"docs": [kept]}]   # the name stays for the other document; no bridge any more
    assert {r["id"] for r in rows(driver, "MATCH (k:Claim) RETURN k.id AS id")} == others
    assert rows(driver, ORPHANS) == []


def test_every_method_ignores_the_other_corpora(empty_graph, settings, embedder, tmp_path) -> None:
    driver = empty_graph
    ingest(write(tmp_path / "news.json", ARTICLES), settings, driver, embedder)
    claims(driver, settings, embedder)
    before = rankings(driver, settings, embedder, "news")
    # a second corpus sharing many words (and every Source) with the first, with its claim layer
    other = [dict(a, body=f"{a['body']} Robots, batteries and rates were discussed again.", url=f"{a['url']}?b")
             for a in ARTICLES[:10]]
    ingest(write(tmp_path / "other.json", other), settings, driver, embedder, corpus="other")
    claims(driver, settings, embedder, corpus="other")
    after = rankings(driver, settings, embedder, "news")
    assert set(before) == set(registry.names())
    for method in before:
        assert after[method] == before[method], method


def test_runs_that_saw_a_changed_document_are_stale_and_keep_their_results(empty_graph, settings, embedder,
                                                                          tmp_path) -> None:
    driver = empty_graph
    path = write(tmp_path / "sample.json", ARTICLES)
    ingest(path, settings, driver, embedder, corpus="sample")
    runs_dir = tmp_path / "runs"
    proc = run_cli(settings, "eval", "--method", "bm25", "--sample", "--run-id", "before", "--no-progress",
                   "--runs-dir", str(runs_dir))
    assert proc.returncode == 0, proc.stderr
    retrieved = rows(driver, "MATCH (:Question)-[r:RETRIEVED {run: 'before'}]->(c:Chunk)-[:FROM_DOCUMENT]->(d) "
                             "RETURN d.key AS key, count(r) AS n ORDER BY n DESC, key")
    total = sum(r["n"] for r in retrieved)
    key = retrieved[0]["key"]
    index = next(i for i, a in enumerate(ARTICLES) if a["url"] == key)
    write(path, changed(ARTICLES, index))
    summary = ingest(path, settings, driver, embedder, corpus="sample")
    assert summary.replaced == 1 and summary.removal.stale_runs == {"before"}
    run = rows(driver, "MATCH (r:EvalRun {id: 'before'}) RETURN r.stale AS stale, r.stale_keys AS keys")[0]
    assert run == {"stale": True, "keys": [key]}
    # its results are all there: the old chunks are retired, not deleted
    kept = rows(driver, "MATCH (:Question)-[r:RETRIEVED {run: 'before'}]->(c) RETURN count(r) AS n, "
                        "count(CASE WHEN c:RetiredChunk THEN 1 END) AS retired")[0]
    assert kept == {"n": total, "retired": retrieved[0]["n"]}
    assert rows(driver, "MATCH (c:Retired) WHERE c:Chunk OR c.embedding IS NOT NULL RETURN count(c) AS n")[0]["n"] == 0
    # Browser's evidence path of a question that retrieved the old version shows it as retired

    question = rows(driver, "MATCH (q:Question)-[:RETRIEVED {run: 'before'}]->(:RetiredChunk) RETURN q.id AS id "
                            "LIMIT 1")[0]["id"]
    path = driver.execute_query(cypher.load("browser/evidence_path"), run="before", question=question).records[0]
    assert path["stale"] is True and len(path["retired"]) > 0
    listed = run_cli(settings, "runs", "list")
    assert "STALE: 1 document changed since" in listed.stdout
    compared = run_cli(settings, "runs", "compare", "before", "--runs-dir", str(runs_dir))
    assert compared.returncode == 0 and f"**stale**: run before retrieved documents replaced or deleted since (1: {key})" \
        in compared.stdout
    assert rows(driver, ORPHANS) == []
    assert run_cli(settings, "runs", "delete", "before").returncode == 0
    assert rows(driver, "MATCH (n:Retired) RETURN count(n) AS n")[0]["n"] == 0


def test_eval_says_when_evidence_facts_lost_their_document(empty_graph, settings, embedder, tmp_path) -> None:
    from mhgraph.eval.runner import EvalOptions, evaluate

    driver = empty_graph
    ingest(write(tmp_path / "sample.json", ARTICLES), settings, driver, embedder, corpus="sample")
    questions = json.loads((SAMPLE / "questions.json").read_text())
    title = questions[0]["evidence_list"][0]["title"]
    key = next(a["url"] for a in ARTICLES if a["title"] == title)
    assert run_cli(settings, "documents", "delete", "--corpus", "sample", "--key", key).returncode == 0
    lost = sum(e["title"] == title for q in questions for e in q["evidence_list"])
    options = EvalOptions(method="bm25", questions_path=SAMPLE / "questions.json", top_k=4, progress=False,
                          runs_dir=tmp_path / "runs", trace=False)
    with pytest.warns(UserWarning, match=rf"^{lost} of \d+ evidence facts match no chunk of corpus 'sample' \(the "
                                         r"report's gold coverage lists them\): our rule scores"):
        evaluate(replace(settings, corpus="sample"), driver, options)


def test_a_trained_model_is_told_the_corpus_changed(empty_graph, settings, embedder, tmp_path) -> None:
    driver = empty_graph
    db = settings.neo4j_database
    path = write(tmp_path / "news.json", ARTICLES)
    ingest(path, settings, driver, embedder)
    trained = corpus_facts(driver, db, "news")
    assert trained["corpus_revision"] == len(ARTICLES)   # one revision per document written
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert warn_if_changed(driver, db, "news", "model m", trained) == 0
    # a combination of rerankers: a part trained here does not hide one trained elsewhere
    both = SimpleNamespace(parts=[SimpleNamespace(name="a", corpus_facts=trained),
                                  SimpleNamespace(name="b", corpus_facts=dict(trained, corpus="other"))])
    with pytest.warns(UserWarning) as caught:
        warn_of_training(both, "kfold:here+kfold:there", driver, db, "news")
    assert len(caught) == 1
    assert str(caught[0].message).startswith("reranker kfold:there learned from corpus 'other', not 'news': ")
    write(path, changed(changed(ARTICLES, 2), 3)[:-1])   # two replaced, one removed
    summary = ingest(path, settings, driver, embedder)
    assert (summary.replaced, summary.removed, summary.unchanged) == (2, 1, 15)
    assert changes_since(driver, db, "news", trained["corpus_revision"]) == (len(ARTICLES) + 3, 3)
    with pytest.warns(UserWarning, match=r"^model m was trained on corpus 'news' at revision 18; 3 documents were "
                                          r"added, replaced or deleted since \(revision 21\)"):
        assert warn_if_changed(driver, db, "news", "model m", trained) == 3
    # a model trained on another corpus, or before revisions were recorded, is not told of changes;
    # given the command that trains one here, it is told it learned elsewhere
    assert warn_if_changed(driver, db, "news", "model m", dict(trained, corpus="other")) == 0
    with pytest.warns(UserWarning, match=r"^model m learned from corpus 'other', not 'news': .+ "
                                          r"\(mhgraph x train --corpus news\)$"):
        assert warn_if_changed(driver, db, "news", "model m", dict(trained, corpus="other"),
                               "mhgraph x train --corpus news") == 0
    assert warn_if_changed(driver, db, "news", "model m", dict(trained, corpus_revision=None)) == 0
    assert warn_if_changed(driver, db, "news", "model m", None) == 0
    # the corpus deleted and made again: its revisions start over, and the model is still told
    assert run_cli(settings, "corpora", "delete", "news").returncode == 0
    ingest(write(path, ARTICLES), settings, driver, embedder)
    ingest(write(path, changed(ARTICLES, 0)), settings, driver, embedder)   # past the trained revision
    assert corpus_facts(driver, db, "news")["corpus_revision"] > trained["corpus_revision"]
    with pytest.warns(UserWarning, match=r"^model m was trained on corpus 'news' as made at .+; it was deleted and made "
                                          rf"again at .+ \({len(ARTICLES)} documents\): retrain"):
        assert warn_if_changed(driver, db, "news", "model m", trained) == len(ARTICLES)


def test_document_keys(empty_graph, settings, embedder, tmp_path) -> None:
    driver = empty_graph
    # two articles with one key and different content: refused before anything is written
    twins = write(tmp_path / "twins.json", [ARTICLES[0], dict(ARTICLES[1], url=ARTICLES[0]["url"])])
    with pytest.raises(InputError, match=r"twins.json:\d+: article .* has the same auto key as the article at line"):
        ingest(twins, settings, driver, embedder)
    assert rows(driver, "MATCH (n) RETURN count(n) AS n")[0]["n"] == 0
    nourl = write(tmp_path / "nourl.json", [{k: v for k, v in ARTICLES[0].items() if k != "url"}])
    with pytest.raises(InputError, match="has no url to key it by"):
        ingest(nourl, settings, driver, embedder, document_key="url")
    with pytest.raises(InputError, match="a flat corpus has titles only"):
        ingest(SAMPLE / "corpus.txt", settings, driver, embedder, document_key="url")
    # a field of the record: the same id with a new title replaces, even though the url changed too
    own = [dict(a, id=f"a{i}") for i, a in enumerate(ARTICLES[:4])]
    path = write(tmp_path / "own.json", own)
    assert ingest(path, settings, driver, embedder, document_key="id").added == 4
    own[1] = dict(own[1], title="A new headline", url="https://example.org/moved")
    summary = ingest(write(path, own), settings, driver, embedder, document_key="id")
    assert (summary.added, summary.replaced, summary.unchanged) == (0, 1, 3)
    assert rows(driver, "MATCH (d:Document {key: 'a1'}) RETURN d.title AS t") == [{"t": "A new headline"}]
    # a corpus keeps the rule it was made with
    with pytest.raises(MhgraphError, match="corpus 'news' keys its documents by id, not auto: pass --key id"):
        ingest(path, settings, driver, embedder)
    bad = run_cli(settings, "ingest", str(path), "--key", "no spaces")
    assert bad.returncode == 1 and "document key 'no spaces'" in bad.stderr


# -- a killed ingest -----------------------------------------------------------------------------------
KILLABLE = Path(__file__).with_name("killable_ingest.py")


def killed_ingest(settings, path: Path, mode: str, at: int, flag: Path) -> None:
    """Run `mhgraph ingest` in a process that stops at its `at`-th document (mode 'between': before
    it starts; 'during': inside its open transaction, after the old version is removed and the new
    one written), and kill it there with SIGKILL."""
    env = {**cli_env(settings), "KILL_MODE": mode, "KILL_AT": str(at), "KILL_FLAG": str(flag)}
    proc = subprocess.Popen([sys.executable, str(KILLABLE), "ingest", str(path), "--corpus", "news", "--no-progress",
                             "--batch-size", "4"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    while not flag.exists():
        assert proc.poll() is None, f"the ingest ended before it was killed: {proc.stderr.read().decode()[-500:]}"
        assert time.monotonic() < deadline, "the ingest never reached the document to be killed at"
        time.sleep(0.1)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    flag.unlink()


@pytest.mark.parametrize("mode", ["between", "during"])
def test_a_killed_ingest_leaves_whole_documents_and_a_rerun_converges(mode, empty_graph, settings, embedder,
                                                                      tmp_path) -> None:
    driver = empty_graph
    final = changed(changed(changed(ARTICLES, 1), 4, NEW_BODY + " Second edition."), 7, "A short new body.")[:-2]
    path = write(tmp_path / "news.json", final)
    ingest(path, settings, driver, embedder)
    expected = snapshot(driver, settings.neo4j_database)
    wipe(driver, settings.neo4j_database)
    write(path, ARTICLES)
    ingest(path, settings, driver, embedder)
    versions = {r["key"]: r["v"] for r in rows(driver, "MATCH (d:Document) RETURN d.key AS key, d.version AS v")}
    write(path, final)
    killed_ingest(settings, path, mode, 2, tmp_path / "flag")   # the 2nd changed document (article 4)
    now = {r["key"]: r["v"] for r in rows(driver, "MATCH (d:Document) RETURN d.key AS key, d.version AS v")}
    assert now[ARTICLES[1]["url"]] != versions[ARTICLES[1]["url"]]      # committed before the kill
    assert now[ARTICLES[4]["url"]] == versions[ARTICLES[4]["url"]]      # the old version, whole
    assert now[ARTICLES[7]["url"]] == versions[ARTICLES[7]["url"]]      # not reached
    whole = rows(driver, "MATCH (d:Document) RETURN d.key AS key, size(d.ingest_fingerprint) AS f, "
                         "COUNT { (:Chunk)-[:FROM_DOCUMENT]->(d) } AS chunks")
    assert all(r["chunks"] > 0 and r["f"] == 32 for r in whole) and rows(driver, ORPHANS) == []
    proc = run_cli(settings, "ingest", str(path), "--corpus", "news", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    assert "(added 0, replaced 2, unchanged 14, removed 2;" in proc.stdout
    assert snapshot(driver, settings.neo4j_database) == expected


def test_documents_stored_before_keys_get_them_without_re_embedding(empty_graph, settings, embedder, tmp_path) -> None:
    """A graph written by an mhgraph without document keys: listed as such, and the next ingest of
    the file keys every document from its stored url (title) and embeds nothing."""
    driver = empty_graph
    path = write(tmp_path / "news.json", ARTICLES)
    ingest(path, settings, driver, embedder)
    driver.execute_query("MATCH (d:Document) REMOVE d.key, d.version, d.files, d.revision")
    driver.execute_query("MATCH (k:Corpus) REMOVE k.document_key, k.revision")
    listed = run_cli(settings, "documents", "list", "--corpus", "news")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.strip().splitlines()[-1] == (
        "18 of them were stored before documents had keys: ingest their file again to key them (unchanged "
        "documents are not re-embedded)")
    summary = ingest(path, settings, driver, embedder)
    assert (summary.unchanged, summary.written_chunks) == (18, 0)
    keyed = rows(driver, "MATCH (d:Document) RETURN d.key AS key, d.version IS NOT NULL AS versioned ORDER BY key")
    assert keyed == [{"key": a["url"], "versioned": True} for a in sorted(ARTICLES, key=lambda a: a["url"])]


def test_a_document_two_files_hold_goes_only_when_both_let_go(empty_graph, settings, embedder, tmp_path) -> None:
    driver = empty_graph
    a = write(tmp_path / "a.json", ARTICLES[:3])
    b = write(tmp_path / "b.json", ARTICLES[2:5])   # article 2 is in both
    ingest(a, settings, driver, embedder)
    assert ingest(b, settings, driver, embedder).unchanged == 1
    files = rows(driver, "MATCH (d:Document {key: $k}) RETURN d.files AS f", k=ARTICLES[2]["url"])[0]["f"]
    assert sorted(files) == sorted([str(a.resolve()), str(b.resolve())])
    summary = ingest(write(b, ARTICLES[3:5]), settings, driver, embedder)   # b drops it: a still holds it
    assert summary.removed == 1 and summary.removal.documents == 0 and summary.removal.kept == 1
    assert rows(driver, "MATCH (d:Document {key: $k}) RETURN d.files AS f", k=ARTICLES[2]["url"]) == [
        {"f": [str(a.resolve())]}]
    proc = run_cli(settings, "documents", "delete", "--corpus", "news", "--file", str(a))
    assert proc.returncode == 0 and proc.stdout.startswith("deleted 3 documents of corpus 'news'"), proc.stdout
    assert rows(driver, "MATCH (d:Document) RETURN d.key AS k ORDER BY k") == [
        {"k": x["url"]} for x in sorted(ARTICLES[3:5], key=lambda x: x["url"])]
    assert rows(driver, ORPHANS) == []
    # a file that holds nothing now is no longer one of the corpus's; the other stays
    assert rows(driver, "MATCH (k:Corpus {name: 'news'}) RETURN k.files AS f") == [{"f": [str(b.resolve())]}]
    # another file gives a key other content: it replaces, with a warning naming the file it came
    # from, and an ingest of that file puts its version back, with the same warning the other way
    c = write(tmp_path / "c.json", changed(ARTICLES[3:4], 0))
    proc = run_cli(settings, "ingest", str(c), "--corpus", "news", "--no-progress")
    assert proc.returncode == 0 and "(added 0, replaced 1, unchanged 0, removed 0;" in proc.stdout, proc.stderr
    assert (f"1 document replaced versions read from other files ({b.resolve()}), e.g. {ARTICLES[3]['url']}: "
            "the last ingest wins") in proc.stderr
    with pytest.warns(UserWarning, match=re.escape(f"1 document replaced versions read from other files "
                                                   f"({c.resolve()})")):
        assert ingest(b, settings, driver, embedder).replaced == 1
    assert rows(driver, "MATCH (d:Document {key: $k}) RETURN d.written_by AS w, d.files AS f",
                k=ARTICLES[3]["url"]) == [{"w": str(b.resolve()), "f": sorted([str(b.resolve()), str(c.resolve())])}]
    with warnings.catch_warnings():   # the same file again: nothing replaced, nothing to say
        warnings.simplefilter("error")
        assert ingest(b, settings, driver, embedder).unchanged == 2

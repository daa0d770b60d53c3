"""Issue 27's measurements: replacing and deleting documents of a real corpus, and BM25 per corpus.

On a corpus of its own (CORPUS_NAME, a fresh ingest of the benchmark's corpus.json; the graph's
other corpora stay as they are):
1. replace 1, 10 and 60 articles (a sentence appended to each body, same url) and restore them:
   seconds, the nodes touched (the old versions' nodes removed, the new ones written) against the
   nodes in the graph;
2. `vector` and `bm25` on the development split, official rule, before and after deleting 60 articles
   (`documents delete`) and ingesting them again: the figures must be the same to 3 decimals;
3. BM25 query time over the corpus's own fulltext index against one index shared by every corpus
   in the graph (how mhgraph searched before), with the same queries.
With --claims (after the run above, on the same graph): the corpus's claim layer is built offline,
then 10 articles are replaced and restored as `mhgraph ingest` does it for a corpus with a claim
layer (the new chunks' claims extracted, new names merged, synonyms redrawn), and timed.

    python bench/documents.py --corpus ../shared/data/multihop-rag/corpus.json --out bench/results/documents
    python bench/documents.py --corpus ../shared/data/multihop-rag/corpus.json --out bench/results/documents --claims

Writes OUT.json and OUT.md. Needs the graph the settings name (MHGRAPH_HOME etc.) running.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from mhgraph.config import load_settings
from mhgraph.embeddings import load_embedder
from mhgraph.graph.connection import connect
from mhgraph.graph.documents import delete_documents, documents_by_key
from mhgraph.graph.schema import fulltext_index, rebuild_corpus_fulltext
from mhgraph.ingest.pipeline import ingest_corpus
from mhgraph.retrieval.bm25 import lucene_query

CORPUS_NAME = "multihop-rag-documents"
SHARED_INDEX = "bench_shared_chunk_text"   # made and dropped here only
NOTE = " Correction: this article was updated after publication."


def graph_nodes(driver, database) -> int:
    return driver.execute_query("MATCH (n) RETURN count(n) AS n", database_=database).records[0]["n"]


def edited(articles: list[dict], picked: set[int]) -> list[dict]:
    return [dict(a, body=a["body"] + NOTE) if i in picked else a for i, a in enumerate(articles)]


def timed_ingest(path: Path, settings, driver, embedder) -> dict:
    t0 = time.perf_counter()
    s = ingest_corpus(path, settings, driver, embedder=embedder, progress=False)
    return {"seconds": round(time.perf_counter() - t0, 2), "reindex_seconds": round(s.reindex_seconds, 2),
            "added": s.added, "replaced": s.replaced,
            "unchanged": s.unchanged, "removed": s.removed, "chunks_written": s.written_chunks,
            "nodes_removed": s.removal.documents + s.removal.chunks + s.removal.claims + s.removal.unused,
            "nodes_written": s.written + s.written_chunks}


def timed_ingest_with_claims(path: Path, settings, driver, embedder) -> dict:
    """An ingest and the claim refresh `mhgraph ingest` runs after it on a corpus with a claim layer."""
    from mhgraph.app.claim_layer import build_claim_layer

    before = graph_nodes(driver, settings.neo4j_database)
    t0 = time.perf_counter()
    s = ingest_corpus(path, settings, driver, embedder=embedder, progress=False)
    ingest_seconds = time.perf_counter() - t0
    built = build_claim_layer(settings, progress=False, only_new=True, documents=s.written_ids).summary
    seconds = time.perf_counter() - t0
    removed = s.removal.documents + s.removal.chunks + s.removal.claims + s.removal.unused
    return {"seconds": round(seconds, 2), "ingest_seconds": round(ingest_seconds, 2),
            "claims_seconds": round(seconds - ingest_seconds, 2), "replaced": s.replaced,
            "chunks_extracted": built.processed, "claims_removed": s.removal.claims,
            "names_and_sources_removed": s.removal.unused, "nodes_removed": removed,
            "nodes_written": graph_nodes(driver, settings.neo4j_database) - before + removed,
            "merged": sum(m.merged for m in built.merges), "synonym_edges": built.synonyms.edges if built.synonyms else None}


def with_claims(args, settings, articles: list[dict], order: list[int], embedder) -> dict:
    from mhgraph.app.claim_layer import build_claim_layer

    path = Path(tempfile.mkdtemp(prefix="bench-documents-")) / "corpus.json"
    path.write_text(json.dumps(articles), encoding="utf-8")
    with connect(settings) as driver:
        ingest_corpus(path, settings, driver, embedder=embedder, progress=False)  # the same file again: unchanged
        t0 = time.perf_counter()
        built = build_claim_layer(settings, progress=False).summary
        build_seconds = time.perf_counter() - t0
        nodes = graph_nodes(driver, settings.neo4j_database)
        path.write_text(json.dumps(edited(articles, set(order[:10]))), encoding="utf-8")
        replace = timed_ingest_with_claims(path, settings, driver, embedder)
        path.write_text(json.dumps(articles), encoding="utf-8")
        restore = timed_ingest_with_claims(path, settings, driver, embedder)
    return {"build_seconds": round(build_seconds, 1), "claims": built.claims, "graph_nodes": nodes, "articles": 10,
            "replace": replace, "restore": restore}


def evaluate(method: str, corpus: str, runs_dir: Path, tag: str, questions: Path) -> dict:
    run_id = f"{method}-{tag}"
    subprocess.run([sys.executable, "-m", "mhgraph.cli", "eval", "--method", method, "--corpus", corpus, "-k", "10",
                    "--questions", str(questions), "--no-trace", "--no-progress", "--runs-dir", str(runs_dir),
                    "--run-id", run_id], check=True, stdout=subprocess.DEVNULL)
    report = json.loads((runs_dir / run_id / "report.json").read_text())
    o = report["official"]["overall"]
    return {"n": o["n"], "hits@4": o["hits@4"], "hits@10": o["hits@10"], "recall@10": o["recall@10"],
            "p50_ms": report["latency_ms"]["p50"]}


def bm25_timing(driver, database, corpus: str, queries: list[str], rounds: int = 3) -> dict:
    """ms per query, p50 over `rounds` passes, through the corpus's index and through a shared one."""
    query = ("CALL db.index.fulltext.queryNodes($index, $query) YIELD node AS c, score "
             "WITH c, score WHERE c.corpus = $corpus LIMIT 10 RETURN c.id AS id, score")
    driver.execute_query(f"CREATE FULLTEXT INDEX {SHARED_INDEX} IF NOT EXISTS FOR (c:Chunk) ON EACH [c.text]",
                         database_=database)
    driver.execute_query("CALL db.awaitIndexes(600)", database_=database)
    out, tops = {}, {}
    try:
        for name, index in (("own", fulltext_index(corpus)), ("shared", SHARED_INDEX)):
            times, top = [], []
            for r in range(rounds):
                for q in queries:
                    t0 = time.perf_counter()
                    rows = driver.execute_query(query, index=index, query=q, corpus=corpus,
                                                database_=database).records
                    times.append((time.perf_counter() - t0) * 1000)
                    if r == 0:
                        top.append([x["id"] for x in rows])
            out[name] = {"p50_ms": round(statistics.median(times), 2),
                         "p95_ms": round(sorted(times)[int(0.95 * len(times))], 2)}
            tops[name] = top
    finally:
        driver.execute_query(f"DROP INDEX {SHARED_INDEX} IF EXISTS", database_=database)
    out["queries"] = len(queries)
    out["top10_differs"] = sum(a != b for a, b in zip(tops["own"], tops["shared"]))
    out["chunks_in_graph"] = driver.execute_query("MATCH (c:Chunk) RETURN count(c) AS n",
                                                  database_=database).records[0]["n"]
    out["chunks_in_corpus"] = driver.execute_query("MATCH (c:Chunk {corpus: $c}) RETURN count(c) AS n", c=corpus,
                                                   database_=database).records[0]["n"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--questions", type=Path, help="default: MultiHopRAG.json beside the corpus")
    ap.add_argument("--out", type=Path, default=Path("bench/results/documents"))
    ap.add_argument("--runs-dir", type=Path, default=Path("runs/bench-documents"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--claims", action="store_true", help="the claim-layer step (after a run without it)")
    args = ap.parse_args()
    questions = args.questions or args.corpus.with_name("MultiHopRAG.json")
    settings = dataclasses.replace(load_settings(), corpus=CORPUS_NAME)
    articles = json.loads(args.corpus.read_text(encoding="utf-8"))
    order = list(range(len(articles)))
    random.Random(args.seed).shuffle(order)
    work = Path(tempfile.mkdtemp(prefix="bench-documents-"))
    path = work / "corpus.json"     # one file, rewritten: the corpus's documents all come from it
    path.write_text(json.dumps(articles), encoding="utf-8")
    embedder = load_embedder(settings.embedding_model, settings.cache_dir)
    if args.claims:
        result = json.loads(args.out.with_suffix(".json").read_text(encoding="utf-8"))
        result["with_claims"] = with_claims(args, settings, articles, order, embedder)
        result["with_claims"]["command"] = "python bench/documents.py " + " ".join(sys.argv[1:])
        result["with_claims"]["date"] = datetime.now(timezone.utc).isoformat(timespec="minutes")
        args.out.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        args.out.with_suffix(".md").write_text(markdown(result), encoding="utf-8")
        print(markdown(result))
        return
    result: dict = {"date": datetime.now(timezone.utc).isoformat(timespec="minutes"),
                    "machine": f"{platform.processor() or platform.machine()}, {platform.platform()}",
                    "command": "python bench/documents.py " + " ".join(sys.argv[1:]), "corpus": CORPUS_NAME,
                    "corpus_file": str(args.corpus), "questions": "development split (2,045 questions)",
                    "embedding_model": embedder.model_name, "seed": args.seed}
    with connect(settings) as driver:
        db = settings.neo4j_database
        result["first_ingest"] = timed_ingest(path, settings, driver, embedder)
        result["graph_nodes"] = graph_nodes(driver, db)
        steps = []
        for n in (1, 10, 60):
            picked = set(order[:n])
            path.write_text(json.dumps(edited(articles, picked)), encoding="utf-8")
            replace = timed_ingest(path, settings, driver, embedder)
            path.write_text(json.dumps(articles), encoding="utf-8")
            restore = timed_ingest(path, settings, driver, embedder)
            steps.append({"articles": n, "replace": replace, "restore": restore, "graph_nodes": graph_nodes(driver, db)})
            print(f"replace {n}: {replace}", flush=True)
        result["replace"] = steps
        before = {m: evaluate(m, CORPUS_NAME, args.runs_dir, "before", questions) for m in ("vector", "bm25")}
        keys = [articles[i].get("url") or articles[i]["title"] for i in order[:60]]
        t0 = time.perf_counter()
        found = [d for key in keys for d in documents_by_key(driver, db, CORPUS_NAME, key)]
        removal = delete_documents(driver, db, CORPUS_NAME, found)
        reindex_seconds = rebuild_corpus_fulltext(driver, db, CORPUS_NAME)   # as `documents delete` does
        delete_seconds = time.perf_counter() - t0
        again = timed_ingest(path, settings, driver, embedder)
        after = {m: evaluate(m, CORPUS_NAME, args.runs_dir, "after", questions) for m in ("vector", "bm25")}
        result["delete_and_reingest"] = {
            "deleted": removal.documents, "delete_seconds": round(delete_seconds, 2),
            "reindex_seconds": round(reindex_seconds, 2),
            "nodes_removed": removal.documents + removal.chunks + removal.claims + removal.unused,
            "reingest": again, "before": before, "after": after,
            "same_to_3_decimals": all(round(before[m][k], 3) == round(after[m][k], 3)
                                      for m in before for k in ("hits@4", "hits@10", "recall@10"))}
        print(f"delete 60 and re-ingest: {result['delete_and_reingest']}", flush=True)
        bm25_queries = [lucene_query(q["query"]) for q in json.loads(questions.read_text())[:300]]
        result["bm25_index"] = bm25_timing(driver, db, CORPUS_NAME, [q for q in bm25_queries if q])
        corpora = driver.execute_query("MATCH (k:Corpus) RETURN collect(k.name) AS n", database_=db).records[0]["n"]
        result["bm25_index"]["corpora_in_graph"] = sorted(corpora)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    args.out.with_suffix(".md").write_text(markdown(result), encoding="utf-8")
    print(markdown(result))


def markdown(r: dict) -> str:
    lines = ["# Documents change: replace, delete, re-ingest (issue 27)", "",
             f"- corpus: `{r['corpus']}`, a fresh ingest of {r['corpus_file']} (every method offline; no claim layer "
             "on this corpus, so the removed nodes are documents, chunks and sources)",
             f"- questions: {r['questions']}, official rule (MultiHop-RAG's retrieval_evaluate.py), K = 10",
             f"- date (UTC): {r['date']}; machine: {r['machine']}, 2 cores, CPU only; embedding model "
             f"{r['embedding_model']}",
             f"- command: `{r['command']}`", "",
             "## Replacing articles (a sentence appended to each body; same url, so the same key)", "",
             f"First ingest: {r['first_ingest']['seconds']} s; the graph then held {r['graph_nodes']:,} nodes "
             "(every corpus in it).", "",
             "| articles | replace s | replaced | nodes removed | nodes written | restore s | touched / graph |",
             "|---|---|---|---|---|---|---|"]
    for s in r["replace"]:
        touched = s["replace"]["nodes_removed"] + s["replace"]["nodes_written"]
        lines.append(f"| {s['articles']} | {s['replace']['seconds']} | {s['replace']['replaced']} | "
                     f"{s['replace']['nodes_removed']} | {s['replace']['nodes_written']} | {s['restore']['seconds']} | "
                     f"{touched} / {s['graph_nodes']:,} ({touched / s['graph_nodes']:.2%}) |")
    d = r["delete_and_reingest"]
    lines += ["", "Seconds include reading, checking and chunking the whole file, embedding the changed articles "
              "only (unchanged articles are skipped by key and fingerprint), and rebuilding the corpus's fulltext "
              f"index (Lucene keeps removed chunks in its term statistics until then): "
              f"{', '.join(str(s['replace']['reindex_seconds']) for s in r['replace'])} s of the replacements.", "",
              "## Deleting 60 articles and ingesting them again", "",
              f"`documents delete` of 60 articles: {d['delete_seconds']} s (of which rebuilding the corpus's "
              f"fulltext index {d['reindex_seconds']} s), {d['nodes_removed']} nodes removed; "
              f"re-ingest: {d['reingest']['seconds']} s (added {d['reingest']['added']}).", "",
              "| method | Hits@4 before | after | Hits@10 before | after | Recall@10 before | after |",
              "|---|---|---|---|---|---|---|"]
    for m in d["before"]:
        b, a = d["before"][m], d["after"][m]
        lines.append(f"| {m} | {b['hits@4']:.3f} | {a['hits@4']:.3f} | {b['hits@10']:.3f} | {a['hits@10']:.3f} | "
                     f"{b['recall@10']:.3f} | {a['recall@10']:.3f} |")
    lines += ["", f"Same to 3 decimals: **{'yes' if d['same_to_3_decimals'] else 'no'}**.", ""]
    b = r["bm25_index"]
    lines += ["## BM25: the corpus's own fulltext index against one shared by every corpus", "",
              f"{b['queries']} questions of the split as Lucene queries, 3 passes; the graph holds "
              f"{b['chunks_in_graph']:,} chunks in {len(b['corpora_in_graph'])} corpora "
              f"({', '.join(b['corpora_in_graph'])}), {b['chunks_in_corpus']:,} of them in this corpus.", "",
              "| index | p50 ms | p95 ms |", "|---|---|---|",
              f"| own (chunk_text_<corpus>, now) | {b['own']['p50_ms']} | {b['own']['p95_ms']} |",
              f"| shared by every corpus (before) | {b['shared']['p50_ms']} | {b['shared']['p95_ms']} |", "",
              f"Top 10 different between the two for {b['top10_differs']} of {b['queries']} queries: the shared "
              "index's term statistics include the other corpora.", ""]
    if c := r.get("with_claims"):
        lines += ["## With a claim layer", "",
                  f"The corpus's claim layer built offline (spaCy): {c['claims']:,} claims in {c['build_seconds']} s; "
                  f"the graph then held {c['graph_nodes']:,} nodes. {c['articles']} articles replaced, then restored, "
                  "as `mhgraph ingest` does on a corpus with a claim layer: the new chunks' claims extracted, new "
                  f"names merged, synonym edges redrawn (`{c['command']}`, {c['date']}).", "",
                  "| step | s (ingest + claims) | chunks extracted | claims removed | names, sources removed | "
                  "nodes removed | nodes written | touched / graph |", "|---|---|---|---|---|---|---|---|"]
        for name in ("replace", "restore"):
            x = c[name]
            touched = x["nodes_removed"] + x["nodes_written"]
            lines.append(f"| {name} | {x['seconds']} ({x['ingest_seconds']} + {x['claims_seconds']}) | "
                         f"{x['chunks_extracted']} | {x['claims_removed']} | {x['names_and_sources_removed']} | "
                         f"{x['nodes_removed']} | {x['nodes_written']} | {touched} / {c['graph_nodes']:,} "
                         f"({touched / c['graph_nodes']:.2%}) |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()

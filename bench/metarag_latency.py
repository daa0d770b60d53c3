"""Multi-Meta-RAG's filtered search: the in-index form against the exact form, on the corpus and
on the corpus replicated N times.

    python bench/metarag_latency.py [--corpus multihop-rag] [--questions FILE] [--limit 300]
                                    [--copies 10] [--repeats 3] [--keep-copies] [--out-name NAME]

The questions' filters come from the rules extractor and their vectors from the corpus's own
model, both computed once, so only the Cypher search is timed (one query per question and form,
round trip to the server included; a warm-up pass first). Each form's top 10 is scored with the
official rule (Hits@10) and compared with the exact form's (overlap). The replicated corpus
(NAME-xN) copies every document N times with a new title, and every chunk with its text, vector
and metadata, into the same vector index; re-embedding identical text would give the same vectors.
Results: bench/results/metarag-latency-NAME.json and .md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import neo4j
import numpy as np
from tqdm import tqdm

from environment import describe, machine, versions

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results"
DEFAULT_QUESTIONS = REPO.parent / "shared" / "data" / "multihop-rag" / "MultiHopRAG.json"


def replicate(driver: neo4j.Driver, database: str, corpus: str, target: str, copies: int) -> None:
    """Corpus `target`: `copies` retitled copies of `corpus` (skipped when it already has them)."""
    from mhgraph import cypher

    records, _, _ = driver.execute_query("MATCH (d:Document {corpus: $c}) RETURN d.id AS id ORDER BY id",
                                         c=corpus, database_=database)
    ids = [r["id"] for r in records]
    have, _, _ = driver.execute_query("MATCH (d:Document {corpus: $c}) RETURN count(d) AS n", c=target,
                                      database_=database)
    if have[0]["n"] == len(ids) * copies:
        return
    if have[0]["n"]:
        raise SystemExit(f"corpus '{target}' exists with other contents: delete it (mhgraph corpora delete {target})")
    driver.execute_query(cypher.load("ingest/merge_corpus"), name=target, file=f"{corpus} x{copies} (bench copy)",
                         database_=database)
    for start in tqdm(range(0, len(ids), 10), desc=f"replicate x{copies}", unit="10 docs"):
        driver.execute_query(cypher.load("bench/replicate_corpus"), document_ids=ids[start:start + 10],
                             copies=copies, corpus=corpus, target=target, database_=database)
    driver.execute_query(cypher.load("schema/await_indexes"), database_=database)


def measure(driver: neo4j.Driver, database: str, corpus: str, questions: list, vectors: np.ndarray, filters: list,
            repeats: int, top_k: int = 10) -> dict:
    from mhgraph import cypher
    from mhgraph.eval import official
    from mhgraph.graph.schema import VECTOR_INDEX
    from mhgraph.retrieval.metarag import filter_query

    out = {}
    for mode in ("index", "exact", "unfiltered"):
        times, rankings = [], []
        for attempt in range(repeats + 1):   # the first pass warms caches and query plans: not timed
            for q, vector, found in zip(questions, vectors, filters):
                if mode == "unfiltered" or found.is_empty:
                    name, params = "retrieval/vector_search", {}
                else:
                    name, params = filter_query(found, mode)
                started = time.perf_counter()
                records, _, _ = driver.execute_query(
                    cypher.load(name), embedding=vector.tolist(), corpus=corpus, top_k=top_k,
                    candidates=top_k * 10, index=VECTOR_INDEX, **params, database_=database,
                    routing_=neo4j.RoutingControl.READ)
                if attempt:
                    times.append((time.perf_counter() - started) * 1000.0)
                if attempt == 1:
                    rankings.append([(r["chunk_id"], official.excerpt(
                        r["text"], r["title"], r["published_at"] and r["published_at"].to_native(), r["source"]))
                        for r in records])
        hits = [official.score_texts([text for _, text in ranking], [e.fact for e in q.evidence]).hits_at_10
                for q, ranking in zip(questions, rankings) if q.evidence]
        out[mode] = {"p50_ms": round(float(np.percentile(times, 50)), 2),
                     "p95_ms": round(float(np.percentile(times, 95)), 2),
                     "mean_ms": round(statistics.fmean(times), 2), "hits_at_10_official": round(statistics.fmean(hits), 4),
                     "_rankings": [[cid for cid, _ in r] for r in rankings]}
    exact = out["exact"]["_rankings"]
    out["index"]["top10_overlap_with_exact"] = round(statistics.fmean(   # a filter admitting nothing: both empty
        len(set(a) & set(b)) / len(b) if b else float(not a) for a, b in zip(out["index"]["_rankings"], exact)), 4)
    out["index"]["same_top10_as_exact"] = round(statistics.fmean(a == b for a, b in zip(out["index"]["_rankings"],
                                                                                        exact)), 4)
    for mode in out.values():
        mode.pop("_rankings")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="multihop-rag")
    parser.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS)
    parser.add_argument("--limit", type=int, default=300)
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--keep-copies", action="store_true", help="leave the replicated corpus in the graph")
    parser.add_argument("--out-name", help="results file name (default metarag-latency-CORPUS)")
    args = parser.parse_args(argv)

    from mhgraph.config import load_settings
    from mhgraph.benchmark import load_questions
    from mhgraph.filters.extractors import build_extractor
    from mhgraph.graph.connection import connect
    from mhgraph.graph.corpora import delete_corpus
    from mhgraph.retrieval import question_embedder

    settings = load_settings()
    database = settings.neo4j_database
    questions = load_questions(args.questions, limit=args.limit)
    target = f"{args.corpus}-x{args.copies}"
    rows = {}
    with connect(settings) as driver:
        embedder = question_embedder(driver, settings, args.corpus)
        vectors = embedder.embed_queries([q.query for q in questions])
        extractor = build_extractor("rules", driver, database, args.corpus)
        filters = [extractor.extract(q.query).filter for q in questions]
        rows["x1"] = measure(driver, database, args.corpus, questions, vectors, filters, args.repeats)
        if args.copies > 1:
            replicate(driver, database, args.corpus, target, args.copies)
            rows[f"x{args.copies}"] = measure(driver, database, target, questions, vectors, filters, args.repeats)
            if not args.keep_copies:
                delete_corpus(driver, database, target)
        counts = {name: driver.execute_query("MATCH (c:Chunk {corpus: $c}) RETURN count(c) AS n", c=c,
                                             database_=database).records[0]["n"]
                  for name, c in (("x1", args.corpus),)}
    counts[f"x{args.copies}"] = counts["x1"] * args.copies
    report = {
        "benchmark": "metarag filtered search: in-index (SEARCH ... WHERE) vs exact pre-filtered cosine",
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "machine": machine(),
        "software": versions(), "corpus": args.corpus, "questions": str(args.questions), "limit": args.limit,
        "filtered_questions": sum(not f.is_empty for f in filters), "repeats": args.repeats, "chunks": counts,
        "command": "python bench/metarag_latency.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "results": rows,
    }
    name = args.out_name or f"metarag-latency-{args.corpus}"
    (RESULTS / f"{name}.json").write_text(json.dumps(report, indent=2) + "\n")
    lines = [f"# metarag filtered search: in-index vs exact ({args.corpus})", "",
             f"- {report['date']}; {describe(report['machine'])}; Neo4j server as configured; "
             f"embedding model {embedder.model_name}",
             f"- the first {len(questions)} questions of {args.questions.name} ({report['filtered_questions']} with a "
             f"rules filter; the rest search unfiltered in every form); {args.repeats} timed passes after a warm-up; "
             "time = one Cypher query, round trip included, top 10 (K = 20 searches behave alike)",
             f"- command: `{report['command']}`", "",
             "| corpus | chunks | form | p50 ms | p95 ms | mean ms | Hits@10 (official) | top-10 overlap with exact | "
             "same top 10 |", "|---|---|---|---|---|---|---|---|---|"]
    for scale, modes in rows.items():
        for mode, r in modes.items():
            lines.append(f"| {scale} | {counts[scale]:,} | {mode} | {r['p50_ms']:.1f} | {r['p95_ms']:.1f} | "
                         f"{r['mean_ms']:.1f} | {r['hits_at_10_official']:.3f} | "
                         f"{r.get('top10_overlap_with_exact', '-')} | {r.get('same_top10_as_exact', '-')} |")
    (RESULTS / f"{name}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

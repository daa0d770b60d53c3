"""Vector index benchmark: what each quantization and search width of the Chunk vector index cost in recall.

    python bench/vector_index.py [--questions MultiHopRAG.json | --queries 500] [--name NAME]

Runs on whatever corpus is ingested in the configured Neo4j (the local server unless NEO4J_URI is
set). For each `vector.quantization.type` (NONE, SCALAR, BINARY, each with the server's default
search expansion) it rebuilds the Chunk vector index, runs every query at each --ratios through mhgraph's own
SEARCH queries (retrieval/vector_search and retrieval/vector_search_sources), and compares the
top-k with exact search: all stored embeddings, brute-force cosine in numpy. At the end the index
is rebuilt with the configured quantization (`vector_quantization`).

recall@k: the share of the k results of a search for k (the index asked for k x ratio candidates,
the best k kept, as mhgraph's `vector_search_ratio` does) whose exact cosine is at least the k-th
best exact cosine (ties count as hits). Filtered: the same with the search restricted to sources, the
way metadata-filtered methods (Multi-Meta-RAG) use the index: a question's gold sources, or the
source of the chunk a sampled query comes from.

Queries: the benchmark's questions (--questions, MultiHop-RAG format) or, without it, --queries
pieces of text (24 words from the middle of a randomly drawn chunk).

Writes bench/results/vector-index-NAME.json and .md.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from environment import describe, machine, versions

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results"
KS = (4, 10, 20)
ALL_CHUNKS = """
MATCH (c:Chunk) WHERE c.corpus = $corpus AND c.embedding IS NOT NULL
RETURN c.id AS id, c.source AS source, c.text AS text, c.embedding AS embedding
ORDER BY c.id
"""


def exact_hits(scores: np.ndarray, pool: np.ndarray, returned: list[int], k: int) -> float:
    """recall@k of `returned` (row numbers, best first) against exact search over `pool`."""
    want = min(k, len(pool))
    if want == 0:
        return 1.0
    kth = np.sort(scores[pool])[::-1][want - 1]
    return sum(1 for r in returned[:want] if scores[r] >= kth - 1e-6) / want


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def queries_from(args: argparse.Namespace, texts: list[str], sources: list[str]) -> list[tuple[str, list[str]]]:
    """(query text, sources to filter on) pairs."""
    if args.questions:
        from mhgraph.benchmark import load_questions

        out = []
        for q in load_questions(args.questions, limit=args.limit):
            gold = sorted({e.source for e in q.evidence if e.source})
            out.append((q.query, gold))
        return out
    rng = random.Random(args.seed)
    out = []
    for row in rng.sample(range(len(texts)), min(args.queries, len(texts))):
        words = texts[row].split()
        middle = max(0, len(words) // 2 - 12)
        out.append((" ".join(words[middle:middle + 24]), [sources[row]]))
    return out


def run_queries(driver: Any, db: str, corpus: str, query: str, mode: str, ratio: int,
                queries: list[tuple[str, list[str]]],
                vectors: np.ndarray, exact: np.ndarray, by_source: dict[str, np.ndarray], row_of: dict[str, int],
                everything: np.ndarray, label: str) -> dict[str, Any]:
    """Every query at every k, asking the index for k * ratio candidates and keeping the best k."""
    recalls: dict[int, list[float]] = {k: [] for k in KS}
    latencies, score_error = [], 0.0
    for qi, (_, gold_sources) in enumerate(tqdm(queries, desc=label, unit="q")):
        if mode == "filtered" and not gold_sources:
            continue
        pool = (np.concatenate([by_source.get(s, np.array([], int)) for s in gold_sources])
                if mode == "filtered" else everything)
        for k in KS:
            t0 = time.perf_counter()
            records, _, _ = driver.execute_query(query, embedding=vectors[qi].tolist(), sources=gold_sources,
                                                 corpus=corpus, top_k=k, candidates=k * ratio, database_=db)
            if k == 10:
                latencies.append((time.perf_counter() - t0) * 1000)
            returned = [row_of[r["chunk_id"]] for r in records]
            for r, rec in zip(returned, records):  # the index reports (1 + cos) / 2
                score_error = max(score_error, abs(rec["score"] - (1 + exact[r, qi]) / 2))
            recalls[k].append(exact_hits(exact[:, qi], pool, returned, k))
    return {
        "mode": mode, "ratio": ratio, "queries": len(latencies),
        **{f"recall@{k}": round(statistics.fmean(v), 4) for k, v in recalls.items()},
        **{f"exact_top{k}_share": round(sum(x == 1.0 for x in v) / len(v), 4) for k, v in recalls.items()},
        "latency_ms_p50_k10": round(percentile(latencies, 50), 2),
        "latency_ms_p95_k10": round(percentile(latencies, 95), 2),
        "max_score_error": round(float(score_error), 6),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=Path, help="MultiHop-RAG questions file: its queries and gold sources.")
    ap.add_argument("--limit", type=int, help="Use the first N questions.")
    ap.add_argument("--queries", type=int, default=500, help="Sampled queries when no --questions (default 500).")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--ratios", type=int, nargs="+", default=[1, 2, 5, 10],
                    help="Candidates asked of the index per result kept (effective_search_ratio).")
    ap.add_argument("--name", default="corpus", help="Results go to bench/results/vector-index-NAME.{json,md}.")
    ap.add_argument("--corpus", help="Corpus to measure (default: the graph's only corpus).")
    ap.add_argument("--corpus-note", default="", help="What is ingested, for the report.")
    args = ap.parse_args()

    from mhgraph import cypher
    from mhgraph.config import VECTOR_QUANTIZATIONS, load_settings
    from mhgraph.graph.capabilities import detect
    from mhgraph.graph.connection import connect
    from mhgraph.graph.corpora import resolve_corpus
    from mhgraph.graph.schema import VECTOR_INDEX, create_chunk_vector_index, ensure_vector_index, index_info
    from mhgraph.retrieval import question_embedder

    settings = load_settings()
    db = settings.neo4j_database
    driver = connect(settings)
    caps = detect(driver, db)
    if not caps.search_clause:
        sys.exit(f"error: Neo4j {caps.version} has no SEARCH clause or vector.quantization.type (2026.01+ needed)")
    if index_info(driver, db, VECTOR_INDEX) is None:
        sys.exit("error: no Chunk vector index: run 'mhgraph ingest' first")

    corpus = resolve_corpus(driver, db, args.corpus or settings.corpus)
    rows, _, _ = driver.execute_query(ALL_CHUNKS, corpus=corpus, database_=db)
    ids = [r["id"] for r in rows]
    sources = [r["source"] for r in rows]
    matrix = np.asarray([r["embedding"] for r in rows], dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    row_of = {chunk_id: i for i, chunk_id in enumerate(ids)}
    by_source: dict[str, np.ndarray] = {s: np.flatnonzero(np.asarray(sources) == s) for s in set(sources)}
    everything = np.arange(len(ids))
    print(f"{len(ids)} chunks, {len(by_source)} sources", file=sys.stderr)

    embedder = question_embedder(driver, settings, corpus)   # the corpus's model, its query instruction
    queries = queries_from(args, [r["text"] for r in rows], sources)
    vectors = embedder.embed_queries([q for q, _ in queries])
    exact = matrix @ vectors.T  # chunks x queries
    plain, filtered = cypher.load("retrieval/vector_search"), cypher.load("retrieval/vector_search_sources")

    results: dict[str, Any] = {}
    try:
        for quantization in VECTOR_QUANTIZATIONS:
            driver.execute_query(cypher.load("schema/drop_index"), name=VECTOR_INDEX, database_=db)
            started = time.perf_counter()
            create_chunk_vector_index(driver, db, matrix.shape[1], caps, quantization)
            driver.execute_query(cypher.load("schema/await_indexes"), database_=db)
            build_s = time.perf_counter() - started
            config = index_info(driver, db, VECTOR_INDEX)["options"]["indexConfig"]
            entry: dict[str, Any] = {"index_config": config, "build_s": round(build_s, 2)}
            entry["runs"] = []
            for mode, query in (("unfiltered", plain), ("filtered", filtered)):
                for vector in vectors[:10]:  # warm the page cache and the query plan
                    driver.execute_query(query, embedding=vector.tolist(), sources=sources[:1], corpus=corpus,
                                         top_k=10, candidates=10, database_=db)
                for ratio in args.ratios:
                    entry["runs"].append(run_queries(driver, db, corpus, query, mode, ratio, queries, vectors, exact,
                                                     by_source, row_of, everything, f"{quantization} {mode} x{ratio}"))
            results[quantization] = entry
    finally:  # rebuilds the index unless the last one built has the configured quantization
        ensure_vector_index(driver, db, matrix.shape[1], caps, settings.vector_quantization)
        driver.execute_query(cypher.load("schema/await_indexes"), database_=db)
        driver.close()

    report = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%MZ"),
        "machine": describe(machine()), "versions": versions(),
        "neo4j": caps.version, "embedding_model": settings.embedding_model,
        "corpus": f"{corpus}: {args.corpus_note}".rstrip(": "), "chunks": len(ids), "sources": len(by_source),
        "queries": f"{len(queries)} questions from {args.questions}" if args.questions
                   else f"{len(queries)} sampled chunk passages (24 words, seed {args.seed})",
        "k": max(KS), "results": results,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"vector-index-{args.name}.json"
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    out.with_suffix(".md").write_text(to_markdown(report), encoding="utf-8")
    print(to_markdown(report))
    print(f"written {out} and {out.with_suffix('.md')}", file=sys.stderr)


def to_markdown(report: dict[str, Any]) -> str:
    lines = [
        f"# Vector index: recall against exact search by quantization and search ratio ({report['corpus'] or 'ingested corpus'})",
        "",
        f"- date (UTC): {report['date']}; machine: {report['machine']}; Neo4j {report['neo4j']}",
        f"- {report['chunks']} chunks from {report['sources']} sources, {report['embedding_model']}; "
        f"queries: {report['queries']}",
        "- recall@k: share of the k results of a search for k that are in the exact top k (brute-force cosine "
        "over all stored embeddings); filtered: search restricted to the query's sources inside the index",
        "",
        "| quantization | expansion | mode | ratio | recall@4 | recall@10 | recall@20 | exact top-10 | p50 ms | p95 ms | build s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, entry in report["results"].items():
        expansion = entry["index_config"].get("vector.default_search_expansion_factor", "-")
        for m in entry["runs"]:
            lines.append(f"| {name} | {expansion} | {m['mode']} | {m['ratio']} | {m['recall@4']:.3f} | "
                         f"{m['recall@10']:.3f} | {m['recall@20']:.3f} | {m['exact_top10_share']:.1%} | "
                         f"{m['latency_ms_p50_k10']:.1f} | {m['latency_ms_p95_k10']:.1f} | {entry['build_s']:.1f} |")
    lines += ["", "ratio: the index is asked for k x ratio neighbours and the best k are kept (neo4j-graphrag's "
              "effective_search_ratio); each k is a separate search. exact top-10: share of queries whose 10 results "
              "are exactly the exact top 10. Latency: the k = 10 searches, round trip from Python.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()

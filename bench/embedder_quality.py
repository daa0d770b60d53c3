"""`vector` on MultiHop-RAG with each embedding model: does a stronger or faster embedder change retrieval?

    python bench/embedder_quality.py [--models M ...] [--runs-dir runs/embedders]

For each model: ingest the official corpus into its own corpus `mhr-<model>` (skipped when that
corpus, or another corpus of the same file made with that model alone, is already in the graph), run `vector` at K = 10 on the development split
under both scoring rules (Hits@4 comes from the same ranked lists), and compare every quantized
model's top-10 lists with its fp32 model's: the mean share of chunks in common, and the share of
questions whose lists are identical. Uses the configured Neo4j server (the local one by default);
the per-question runs stay in --runs-dir (not in git), the summary goes to
bench/results/embedders-quality-multihop-rag.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from environment import describe, machine, versions

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data" / "multihop-rag"
RESULTS = REPO / "bench" / "results"
MODELS = ("all-MiniLM-L6-v2", "all-MiniLM-L6-v2+int8", "bge-small-en-v1.5", "bge-small-en-v1.5+int8")
METRICS = ("hits@4", "hits@10", "map@10", "mrr@10")


def corpus_name(model: str) -> str:
    return "mhr-" + model.replace("+", "-").replace("/", "-")


def chunk_keys(driver: Any, database: str, corpus: str) -> dict[str, tuple[str, int]]:
    """chunk id -> (article id, start) so lists from different corpora compare chunk by chunk."""
    records, _, _ = driver.execute_query(
        "MATCH (c:Chunk)-[:FROM_DOCUMENT]->(d:Document) WHERE c.corpus = $corpus "
        "RETURN c.id AS id, d.title AS title, d.url AS url, c.start_char AS start",
        corpus=corpus, database_=database)
    return {r["id"]: (f"{r['title']}\x1f{r['url']}", r["start"]) for r in records}


def top_lists(run_dir: Path, keys: dict[str, tuple[str, int]]) -> dict[str, list[tuple[str, int]]]:
    results = json.loads((run_dir / "results.json").read_text())
    return {q["id"]: [keys[c["chunk_id"]] for c in q["hops"][-1]["chunks"]] for q in results}


def overlap(a: dict[str, list], b: dict[str, list], k: int = 10) -> dict[str, float]:
    shared = [len(set(a[q][:k]) & set(b[q][:k])) / k for q in a]
    same = [a[q][:k] == b[q][:k] for q in a]
    return {"top10_overlap_mean": round(sum(shared) / len(shared), 4),
            "top10_identical_share": round(sum(same) / len(same), 4)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    parser.add_argument("--corpus", type=Path, default=DATA / "corpus.json")
    parser.add_argument("--questions", type=Path, default=DATA / "MultiHopRAG.json")
    parser.add_argument("--runs-dir", type=Path, default=REPO / "runs" / "embedders")
    parser.add_argument("--without-instruction", action="store_true",
                        help="also score each model that has a query instruction (bge) without it")
    parser.add_argument("--out", type=Path, default=RESULTS / "embedders-quality-multihop-rag.json")
    args = parser.parse_args(argv)

    from mhgraph.config import load_settings
    from mhgraph.embeddings import INT8_SUFFIX, load_embedder
    from mhgraph.errors import MhgraphError
    from mhgraph.eval.runner import EvalOptions, evaluate
    from mhgraph.graph.connection import connect
    from mhgraph.graph.corpora import list_corpora
    from mhgraph.ingest.pipeline import ingest_corpus

    settings = load_settings()
    database = settings.neo4j_database

    def score(driver: Any, settings: Any, label: str, name: str, run_id: str, embedder: Any) -> dict[str, Any]:
        """vector at K = 10 on corpus `name` (kept in --runs-dir, reused when there)."""
        run_dir = args.runs_dir / run_id
        if not (run_dir / "report.json").is_file():
            print(f"--- vector K=10 on {name} ({label})", file=sys.stderr)
            evaluate(settings, driver, EvalOptions(method="vector", questions_path=args.questions, top_k=10,
                                                   runs_dir=args.runs_dir, run_id=run_id, progress=True),
                     embedder=embedder)
        report = json.loads((run_dir / "report.json").read_text())
        return {"model": label, "corpus": name, "run": run_id, "questions": report["questions"],
                "official": {m: round(report["official"]["overall"][m], 4) for m in METRICS},
                "ours": {m: round(report["overall"]["ranking"][m], 4) for m in METRICS},
                "latency_p50_ms": report["latency_ms"]["p50"]}
    rows: list[dict[str, Any]] = []
    lists: dict[str, dict[str, list]] = {}
    try:
        with connect(settings) as driver:
            for model in args.models:
                have = {c.name: c for c in list_corpora(driver, database)}
                # mhr-<model>, else any corpus of the same file made with that model alone
                same = [c.name for c in have.values()
                        if str(args.corpus.resolve()) in c.files and c.embedding_models == (model,)]
                name = corpus_name(model) if corpus_name(model) in have or not same else same[0]
                ingest_s = None
                if name not in have or have[name].embedding_models != (model,):
                    print(f"--- ingest {args.corpus} as {name} with {model}", file=sys.stderr)
                    t = time.perf_counter()
                    ingest_corpus(args.corpus, replace(settings, corpus=name), driver,
                                  embedder=load_embedder(model, settings.cache_dir))
                    ingest_s = round(time.perf_counter() - t, 1)
                row = score(driver, replace(settings, corpus=name), model, name, f"{name}-vector-k10", None)
                lists[model] = top_lists(args.runs_dir / row["run"], chunk_keys(driver, database, name))
                if ingest_s is not None:
                    row["ingest_s_here"] = ingest_s
                base = model[:-len(INT8_SUFFIX)] if model.endswith(INT8_SUFFIX) else None
                if base in lists:
                    row["against"] = base
                    row.update(overlap(lists[model], lists[base]))
                    row["official_hits@10_delta"] = round(
                        row["official"]["hits@10"] - next(r for r in rows if r["model"] == base)["official"]["hits@10"], 4)
                rows.append(row)
                print(json.dumps(row), file=sys.stderr)
                if args.without_instruction and getattr(embedder := load_embedder(model, settings.cache_dir),
                                                        "query_instruction", ""):
                    embedder.query_instruction = ""
                    rows.append(score(driver, replace(settings, corpus=name), f"{model} (no query instruction)",
                                      name, f"{name}-noinstr-vector-k10", embedder))
                    print(json.dumps(rows[-1]), file=sys.stderr)
    except MhgraphError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1

    info = machine()
    report = {"benchmark": "embedder quality", "date_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
              "command": "python bench/embedder_quality.py --models " + " ".join(f"'{m}'" for m in args.models)
                         + (" --without-instruction" if args.without_instruction else ""),
              "questions": "MultiHop-RAG development split (2,045 questions)", "method": "vector, K = 10",
              "machine": info, "software": versions(), "results": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    lines = ["| model | official Hits@10 | official Hits@4 | official MAP@10 | official MRR@10 | ours Hits@10 | "
             "ours Hits@4 | top-10 overlap with fp32 | identical top-10 | p50 ms |", "|---|" + "---:|" * 9]
    for r in rows:
        o, u = r["official"], r["ours"]
        lines.append(f"| {r['model']} | {o['hits@10']:.4f} | {o['hits@4']:.4f} | {o['map@10']:.4f} | {o['mrr@10']:.4f} | "
                     f"{u['hits@10']:.4f} | {u['hits@4']:.4f} | {r.get('top10_overlap_mean', '-')} | "
                     f"{r.get('top10_identical_share', '-')} | {r['latency_p50_ms']:.0f} |")
    args.out.with_suffix(".md").write_text(
        f"# `vector` per embedding model, MultiHop-RAG development split (2,045 questions)\n\n{describe(info)}; "
        f"{report['date_utc']}; `{report['command']}`.\n\n" + "\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

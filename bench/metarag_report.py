"""The Markdown record of bench/metarag.sh: every run in one table, then filter quality per
extractor, the official rule per question type, and latency per step, beside the published figures.

    python bench/metarag_report.py COMPARE_MD RUN_DIR... --questions FILE --name NAME --command CMD [--title T]

bench/embed_header.sh uses it too, over corpora that differ only in the header embedded with each chunk.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from environment import describe, machine
from markdown import compare_lines, f, load_summaries, neo4j_server, report_parser, split_label, table

PUBLISHED = [
    "Published, for comparison (full benchmark of 2,556 questions or subsets, not the development split; "
    "other embedders and a real cross-encoder): Multi-Meta-RAG Hits@4 **0.792** (plain RAG 0.663; voyage-02 "
    "embeddings, GPT-3.5 filters, bge-reranker-large, top 20 -> 6); the comparative study's Multi-Meta-RAG "
    "(50 questions, one hop, rerank to 10) Recall@10 **0.6018**, F1@10 0.2476 with bge-large-en-v1.5 "
    "(0.4910 / 0.2388 with voyage-2).",
]
FILTER_COLUMNS = {"source_precision": "source P", "source_recall": "source R", "date_precision": "date P",
                  "date_recall": "date R", "evidence_admitted": "evidence admitted", "has_dates": "with dates",
                  "agrees_sources": "same sources as reference", "agrees_dates": "same dates as reference"}


def trained_reranker(name: str) -> str:
    """How a k-fold reranker (`kfold:DIR (in-domain trained, k-fold)`) was trained, from its folds.json."""
    directory = Path(name[len("kfold:"):].split(" (")[0])
    record = json.loads((directory / "folds.json").read_text())
    o = record["options"]
    folds = record["folds"]
    return (f"- {directory}: cross-encoder trained here, **in-domain** (on this split's other questions, "
            f"{record['k']}-fold by question: each question is reranked by the model that never saw it); "
            f"backbone {o['backbone']}, {o['negatives']} near misses per question from {record.get('candidates_from')}, "
            f"max length {o['max_length']}, {o['epochs']:g} epoch, batch {o['batch_size']}, lr {o['learning_rate']:g}, "
            f"{'bfloat16' if o.get('bf16') else 'float32'}; {round(sum(f['pairs'] for f in folds) / len(folds)):,} pairs "
            f"and {sum(f['seconds'] for f in folds) / len(folds) / 60:.0f} min per fold model")


def main(argv: list[str] | None = None) -> int:
    parser = report_parser(__doc__)
    parser.add_argument("--name", required=True)
    parser.add_argument("--title", default="Multi-Meta-RAG")
    args = parser.parse_args(argv)
    summaries = load_summaries(args.runs)
    first = next(iter(summaries.values()))
    label = split_label(args.questions)
    slices = {json.dumps(s.get("selection"), sort_keys=True): s.get("selection") for s in summaries.values()
              if (s.get("selection") or {}).get("per_type") or (s.get("selection") or {}).get("limit")}
    if slices:   # runs on part of the file: say which part
        parts = [f"the first {sel['per_type']} questions of each type" if sel.get("per_type")
                 else f"the first {sel['limit']} questions" for sel in slices.values()]
        label = f"{' / '.join(parts)} ({', '.join(str(sel['questions']) for sel in slices.values())}) of {label}"
    server = neo4j_server()
    rerankers = sorted({s["params"].get("reranker") for s in summaries.values() if s["params"].get("reranker")})
    corpora = {s["corpus"]: s.get("embed_header", "none") for s in summaries.values()}
    lines = [f"# {args.title} on {args.name}", "",
             f"- questions: {label} ({args.questions}); "
             + ("corpus " if len(corpora) == 1 else "corpora ")
             + ", ".join(f"'{c}' (embed_header {h})" for c, h in corpora.items()),
             f"- date (UTC): {first['started_at'][:16]}Z to {max(s['finished_at'] for s in summaries.values())[:16]}Z; "
             f"machine: {describe(machine())}, CPU only",
             f"- embedding model: {first['embedding_model']}; chunks {first['chunk_size']}/{first['chunk_overlap']} "
             f"tokens; Neo4j {server}",
             f"- rerankers: {', '.join(rerankers) or 'none'} (no cross-encoder weights are carried by a registry "
             "package: see ../shared/docs/offline-models.md)",
             *(trained_reranker(r) for r in rerankers if r.startswith("kfold:")),
             *(f"- filter extractor `llm`: {m}" for m in sorted({s["filters"]["llm"] for s in summaries.values()
                                                               if (s.get("filters") or {}).get("llm")})),
             f"- command: {args.command}", "",
             *PUBLISHED, "",
             "Run names (metarag.sh; embed_header.sh prefixes header-HEADER-): metarag-EXTRACTOR[-RERANKER]-kK'. "
             "Every metarag run searches K = 20 filtered candidates "
             "inside the vector index and keeps K'; without a reranker the first K' by similarity. The `gold` "
             "extractor is an upper bound (each question's own evidence sources and days), not a method."
             + (" `-wW`: the reranker's score fused with the search's, each standardised over the question's "
                "candidates, the reranker weighing W (`--rerank-weight W`; an mhgraph option); without it the "
                "reranker's order alone, as the original ranks."
                if any(s["params"].get("rerank_weight") is not None for s in summaries.values()) else ""), "",
             "## All runs", ""]
    lines += compare_lines(args.compare)
    lines += ["", "## Filters against each question's evidence", "",
              "Per extractor, over the questions with evidence (null questions apart); from its K' = 10 run.", ""]
    rows = []
    for name, s in summaries.items():
        filters = s.get("filters")
        if not filters or not name.endswith("-k10") or s["params"].get("reranker") or s["params"]["filter_mode"] != "index":
            continue
        g = filters["groups"]["all"]
        rows.append([filters["extractor"] + (" (upper bound)" if filters["upper_bound"] else ""), str(g["n"]),
                     *(f(g.get(k)) for k in FILTER_COLUMNS), str(filters["fallbacks"]),
                     f"{filters['filtered_null']}/{filters['null']}"])
    lines += table(["extractor", "n", *FILTER_COLUMNS.values(), "unfiltered (fallback)", "null questions filtered"],
                   rows)
    lines += ["", "Per question type (evidence admitted / source R / date R):", ""]
    types = ["comparison_query", "inference_query", "temporal_query"]
    type_rows = []
    for name, s in summaries.items():
        filters = s.get("filters")
        if filters and name.endswith("-k10") and not s["params"].get("reranker") and s["params"]["filter_mode"] == "index":
            groups = filters["groups"]
            type_rows.append([filters["extractor"], *(
                f"{f(groups[t]['evidence_admitted'])} / {f(groups[t]['source_recall'])} / {f(groups[t]['date_recall'])}"
                if t in groups else "-" for t in types)])
    lines += table(["extractor", *types], type_rows)
    lines += ["", "## Official rule per question type", "", "Hits@4 / Hits@10 under the official rule.", ""]
    lines += table(["run", *types], [
        [name, *(f"{f(s['official']['by_type'][t]['hits@4'])} / {f(s['official']['by_type'][t]['hits@10'])}"
                 if t in s["official"]["by_type"] else "-" for t in types)]
        for name, s in summaries.items() if "official" in s])
    lines += ["", "## Latency per step (ms, p50 / p95)", "",
              "Measured during the evaluation runs, which may share the machine with other work: "
              "bench/metarag_latency.py measures the search alone on a quiet machine.", ""]
    lines += table(["run", "whole question", "filter extraction", "search", "reranking"], [
        [name, f"{s['latency_ms']['p50']:.1f} / {s['latency_ms']['p95']:.1f}",
         *(f"{s['phases_ms'][p]['p50']:.1f} / {s['phases_ms'][p]['p95']:.1f}" if p in s.get("phases_ms", {}) else "-"
           for p in ("filter", "search", "rerank"))]
        for name, s in summaries.items()])
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

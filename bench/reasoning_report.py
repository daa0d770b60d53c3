"""The Markdown record of bench/reasoning.sh: IR-CoT and decomposition beside the one-hop
baselines and the published figures, hop-conditioned P/R/F1 per step under both rules, steps,
latency and the model's calls and tokens per question.

    python bench/reasoning_report.py COMPARE_MD RUN_DIR... --questions FILE --name NAME --command CMD
"""

from __future__ import annotations

import sys

from environment import describe, machine
from markdown import compare_lines, f, load_summaries, neo4j_server, report_parser, split_label, table

PUBLISHED = [
    "Published, for comparison (the comparative study: 50 questions of the full benchmark, BM25 for IR-CoT, "
    "MiniLM-L6 embeddings, reasoning by deepseek-r1 / devstral-small; not the development split, and its "
    "matching rule is not published):",
    "- IR-CoT, 1,000/200-token chunks, top-10: P **0.66**, R **0.89**, F1 **0.76** at 1.2 iterations; top-5: "
    "F1 0.47 (deepseek-r1, 1.7 it.), 0.466 (devstral-small, 1.4 it.).",
    "- Decomposition, 300/60-token chunks, top-5 per sub-question: N=3 P 0.242 R 0.663 F1 **0.336**; "
    "N=4 0.214 / 0.660 / 0.301; N=5 0.182 / 0.675 / 0.265.",
]


def strategy(s: dict) -> str:
    r = s.get("reasoning")
    if not r:
        return "-"
    return r["strategy"] if r["offline"] else f"model {r['strategy']}"


def per_question(s: dict, key: str) -> str:
    usage = (s.get("reasoning") or {}).get("llm_usage")
    n = s["selection"]["questions"]
    return f"{usage[key] / n:.1f}" if usage else "-"


def main(argv: list[str] | None = None) -> int:
    parser = report_parser(__doc__)
    parser.add_argument("--name", required=True)
    args = parser.parse_args(argv)
    summaries = load_summaries(args.runs)
    first = next(iter(summaries.values()))
    split = split_label(args.questions)
    server = neo4j_server()
    corpora = {s["corpus"]: f"{s['chunk_size']}/{s['chunk_overlap']}" for s in summaries.values()}
    models = sorted({strategy(s) for s in summaries.values() if s.get("reasoning") and not s["reasoning"]["offline"]})
    held = next((s["reasoning"]["held_out"] for s in summaries.values() if s.get("reasoning")), [])
    lines = [f"# IR-CoT and query decomposition on {args.name}", "",
             f"- questions: {split} ({args.questions}); runs named `sliceN-...` take the first N questions of each "
             "type (a stratified slice); the ircot and decompose runs leave out the "
             f"{len(held)} few-shot demonstration questions (mhgraph/reasoning/demonstrations.json), whichever "
             "strategy runs: " + "; ".join(f"\"{q[:70]}...\"" for q in held),
             "- corpora: " + ", ".join(f"'{c}' ({chunking}-token chunks)" for c, chunking in corpora.items()),
             f"- date (UTC): {min(s['started_at'] for s in summaries.values())[:16]}Z to "
             f"{max(s['finished_at'] for s in summaries.values())[:16]}Z; machine: {describe(machine())}, CPU only",
             f"- embedding model (vector, decompose): {first['embedding_model']}; BM25: Neo4j's Chunk fulltext index "
             f"(Lucene); Neo4j {server}",
             "- reasoning: `offline` runs use the documented offline strategies (mhgraph/reasoning/reasoner.py, "
             "decomposer.py): **no language model; not a model's figures**"
             + (f"; `llm` runs: {', '.join(models)}" if models else ""),
             f"- command: {args.command}", "", *PUBLISHED, "",
             "## Every run", "",
             "P / R / F1: hop-conditioned, over the final accumulated set D (every chunk retrieved, all hops), "
             "macro over the questions with evidence; ours (gold chunks by the project's rule, questions with gold "
             "chunks) and official (a chunk holds a gold fact whole, spaces and newlines removed; questions with "
             "evidence). Hits and Recall@10 on the final ranking (the steps' rankings fused). Steps: reasoning "
             "steps after the first search (ircot), sub-questions (decompose).", ""]
    rows = []
    for name, s in summaries.items():
        last = s["overall"]["hops"][-1] if s["overall"]["hops"] else {}
        off = s.get("official", {}).get("overall", {})
        olast = off.get("hops", [{}])[-1] if off.get("hops") else {}
        r = s.get("reasoning") or {}
        rows.append([name, s["method"], strategy(s), f"{s['chunk_size']}/{s['chunk_overlap']}",
                     str(s["params"].get("top_k")), str(s["scored"]),
                     f"{r['steps_mean']:.2f}" if r else "-", f"{s['overall']['avg_returned']:.1f}",
                     f"{f(last.get('precision'))} / {f(last.get('recall'))} / {f(last.get('f1'))}",
                     f"{f(olast.get('precision'))} / {f(olast.get('recall'))} / {f(olast.get('f1'))}",
                     f"{f(s['overall']['ranking'].get('hits@4'))} / {f(s['overall']['ranking'].get('hits@10'))}",
                     f"{f(off.get('hits@4'))} / {f(off.get('hits@10'))}", f(off.get("recall@10")),
                     f"{s['latency_ms']['p50']:.0f} / {s['latency_ms']['p95']:.0f}",
                     per_question(s, "calls"), per_question(s, "prompt_tokens"), per_question(s, "completion_tokens")])
    lines += table(["run", "method", "reasoning", "chunks", "K", "n", "steps", "\\|D\\|", "P / R / F1 (ours)",
                    "P / R / F1 (official)", "Hits@4 / @10 (ours)", "Hits@4 / @10 (official)",
                    "Recall@10 (official)", "ms p50 / p95", "LLM calls / q", "prompt tok / q",
                    "completion tok / q"], rows)
    lines += ["", "## Hop-conditioned P / R / F1 per step", "",
              "Each step (hop r) of the multi-step runs: the accumulated set after it; a question that stopped "
              "earlier keeps its last set. ours | official.", ""]
    step_rows = []
    for name, s in summaries.items():
        if s["method"] not in ("ircot", "decompose"):
            continue
        off = s.get("official", {}).get("overall", {}).get("hops", [])
        for i, h in enumerate(s["overall"]["hops"]):
            o = off[i] if i < len(off) else {}
            step_rows.append([name, str(h["hop"]), f"{h['retrieved']:.1f}",
                              f"{f(h['precision'])} / {f(h['recall'])} / {f(h['f1'])}",
                              f"{f(o.get('precision'))} / {f(o.get('recall'))} / {f(o.get('f1'))}"])
    lines += table(["run", "hop r", "mean \\|D_r\\|", "P / R / F1 (ours)", "P / R / F1 (official)"], step_rows)
    lines += ["", "## Why chains stopped", ""]
    lines += table(["run", "stops", "model failures", "LLM seconds / q"], [
        [name, ", ".join(f"{k} {v}" for k, v in s["reasoning"]["stops"].items()) or "-",
         str(s["reasoning"]["failures"]), per_question(s, "seconds")]
        for name, s in summaries.items() if s.get("reasoning")])
    lines += ["", "## Official rule per question type", "", "Hits@4 / Hits@10 under the official rule.", ""]
    types = ["comparison_query", "inference_query", "temporal_query"]
    lines += table(["run", *types], [
        [name, *(f"{f(s['official']['by_type'][t]['hits@4'])} / {f(s['official']['by_type'][t]['hits@10'])}"
                 if t in s["official"]["by_type"] else "-" for t in types)]
        for name, s in summaries.items() if "official" in s])
    lines += ["", "## Compare table (mhgraph eval --compare)", ""]
    lines += compare_lines(args.compare)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

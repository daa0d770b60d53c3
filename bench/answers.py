"""Answer accuracy on MultiHop-RAG: `vector` evidence at K = 4 and 10, read by the configured
language model (or the offline heuristic), scored per question type by the official rule and
normalised exact match, with abstention on null questions and the model's cost.

    python bench/answers.py --backend none                       # the whole development split
    python bench/answers.py --backend local --per-type 8         # a stratified slice (first 8 of each type)
    OPENAI_BASE_URL=... MHGRAPH_LLM_MODEL=... python bench/answers.py --backend openai

Each run's report.json is kept in bench/results/answers-multihop-rag/; the table of all recorded
runs is rewritten into bench/results/answers-multihop-rag.md."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from environment import machine  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
QUESTIONS = ROOT.parent / "shared" / "data" / "multihop-rag" / "MultiHopRAG.json"
# Published answer accuracy on MultiHop-RAG (../shared/docs/methods.md, as Asrani et al. report
# them): GPT-4 reading plain RAG evidence (all-mpnet-base-v2, top 8, no reranker), and
# Llama-3.1-8B with the claim-bridge pipeline.
PUBLISHED = [("GPT-4, plain RAG", 0.56), ("Llama-3.1-8B, claims pipeline", 0.66)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=["none", "local", "openai"], required=True)
    parser.add_argument("--per-type", type=int, help="first N questions of each type (default: all)")
    parser.add_argument("-k", type=int, nargs="+", default=[4, 10])
    parser.add_argument("--corpus", default="multihop-rag")
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    parser.add_argument("--name", default="multihop-rag")
    args = parser.parse_args()

    from mhgraph.config import load_settings
    from mhgraph.eval.runner import EvalOptions, evaluate
    from mhgraph.graph.connection import connect

    settings = load_settings({"llm_backend": args.backend, "corpus": args.corpus})
    out = RESULTS / f"answers-{args.name}"
    out.mkdir(parents=True, exist_ok=True)
    runs = ROOT / "runs" / f"bench-answers-{args.name}"     # per-question results stay out of git
    slice_name = f"per-type{args.per_type}" if args.per_type else "all"
    with connect(settings) as driver:
        for k in args.k:
            run_id = f"{args.name}-vector-k{k}-{args.backend}-{slice_name}"
            run = evaluate(settings, driver, EvalOptions(
                method="vector", questions_path=args.questions, top_k=k, per_type=args.per_type, trace=False,
                runs_dir=runs, run_id=run_id, answer=True, scoring="both"))
            summary = run.summary
            summary["bench"] = {"date_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                                "machine": machine(), "command": "python " + " ".join(sys.argv)}
            (out / f"{run_id}.json").write_text(json.dumps(summary, indent=1, default=str) + "\n", encoding="utf-8")
            shutil.copy(run.run_dir / "results.json", runs / f"{run_id}-results.json")
            a = summary["answers"]
            print(f"{run_id}: official {a['overall']['official']:.3f}, exact {a['overall']['exact']:.3f}, "
                  f"failed {a['overall']['failed']}", flush=True)
    write_table(out, RESULTS / f"answers-{args.name}.md")


def write_table(folder: Path, path: Path) -> None:
    rows = []
    for file in sorted(folder.glob("*.json")):
        s = json.loads(file.read_text(encoding="utf-8"))
        a = s["answers"]
        by = a["by_type"]
        usage = a.get("usage") or {}
        per_answer = (f"{usage['seconds'] / usage['calls']:.1f}" if usage.get("calls") else "-")
        cell = lambda g: f"{g['official']:.3f} / {g['exact']:.3f}" if g else "-"  # noqa: E731
        sel = s.get("selection", {})
        rows.append("| " + " | ".join([
            a["reader"], str(a["evidence_k"]),
            f"{sel.get('questions', a['overall']['questions'])}" + (f" (first {sel['per_type']} per type)"
                                                                    if sel.get("per_type") else " (all)"),
            cell(a["overall"]), *(cell(by.get(t)) for t in ("inference_query", "comparison_query",
                                                            "temporal_query", "null_query")),
            f"{a['abstention']['abstained_on_null']:.2f}" if a["abstention"]["abstained_on_null"] is not None else "-",
            f"{a['abstention']['wrongly_abstained']:.2f}" if a["abstention"]["wrongly_abstained"] is not None else "-",
            str(a["overall"]["failed"]), per_answer, s["bench"]["date_utc"][:10]]) + " |")
    lines = [
        "# Answers on MultiHop-RAG, development split (2,045 questions) or a stated slice of it", "",
        "`vector` evidence (all-MiniLM-L6-v2, chunks of 256/32 tokens), top K chunks of the final ranking "
        "given to the reader. Cells: accuracy by the official rule (MultiHop-RAG qa_evaluate.py) / "
        "normalised exact match. Abstention: share abstained on null questions / share wrongly abstained "
        "on answerable ones. The offline heuristic is not a language model. Command: "
        "`python bench/answers.py --backend none|local|openai [--per-type N]`; per-run summaries in "
        f"[`{folder.name}/`]({folder.name}/).", "",
        "| reader | K | questions | all | inference | comparison | temporal | null | abstained on null | "
        "wrongly abstained | failed | s per answer | date |",
        "|---|---:|---|---|---|---|---|---|---:|---:|---:|---:|---|",
        *rows, "",
        "Published, full benchmark (2,556 questions), official rule: "
        + "; ".join(f"{name} {value:.2f}" for name, value in PUBLISHED) + ".", ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

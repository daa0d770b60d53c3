"""The record of bench/generate_variants.sh (issue 25): how one `mhgraph generate` option (a STUDY: grouping,
wording) changes a generated question set and the methods' figures on it.

    python bench/generate_variants_report.py --study grouping --name multihop-rag \
        --out runs/bench-generate-grouping --dev ../shared/data/multihop-rag/MultiHopRAG.json \
        --variants random story --methods bm25 vector hybrid metarag treehop ircot decompose \
        --json bench/results/generate-grouping-NAME.json --command CMD > bench/results/generate-grouping-NAME.md

Reads, per variant, OUT/NAME/VARIANT/questions.json (and its summary), OUT/NAME/VARIANT/generate.json and the
methods' runs OUT/NAME/VARIANT/runs/ID/report.json; the development split's figure of each method: a fresh run of bench/generate.sh's dev step under runs/bench-generate/NAME/runs-dev/
when there is one, else the summary that step recorded (bench/results/generate-NAME/dev/ID.json; treehop: the
pair-disjoint k-fold models), else what bench/generate_report.py falls back to. Computes Kendall's tau and the discordant pairs (as
bench/generate_report.py), the mean distance between a method's figure on a set and on the development
split, the lexical overlap, and the evidence coherence: per question the mean cosine between its facts'
embeddings (all pairs), by type, beside the development split's.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import statistics
from pathlib import Path
from typing import Any

import numpy as np
from environment import describe, machine, versions
from generate_report import (
    DEV_FRESH,
    DEV_LABEL,
    LABEL,
    METHODS,
    QUESTION_FOLDS,
    dev_figures,
    figures,
    load,
    overlap,
    tau,
    tau_cell,
)
from markdown import f, table

STUDIES = {   # study -> (title, what the record holds)
    "grouping": ("Story grouping against random grouping in `mhgraph generate` (issue 25)",
                 "mhgraph generate --grouping: generated sets against the development split (issue 25)"),
    "wording": ("Described against quoted facts in `mhgraph generate`'s offline templates (issue 25)",
                "mhgraph generate --wording: generated sets against the development split (issue 25)"),
}
RUN_ID = {**{m: rid for m, (rid, _) in METHODS.items()}, "treehop": "treehop-packaged-k5-h2"}
TYPES = ("inference_query", "comparison_query", "temporal_query")


def coherence(path: Path, embedder) -> dict[str, dict[str, float]]:
    """Per type: the mean over questions of the mean cosine between the embeddings of a question's facts."""
    qs = [q for q in load(path) if q.get("question_type") in TYPES and len(q.get("evidence_list") or []) >= 2]
    facts = sorted({e["fact"] for q in qs for e in q["evidence_list"]})
    vectors = np.asarray(embedder.embed_documents(facts), dtype=np.float64)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    row = {fact: i for i, fact in enumerate(facts)}
    out: dict[str, dict[str, float]] = {}
    for t in TYPES:
        values = [float(np.mean([vectors[row[a["fact"]]] @ vectors[row[b["fact"]]]
                                 for a, b in itertools.combinations(q["evidence_list"], 2)]))
                  for q in qs if q["question_type"] == t]
        if values:
            out[t] = {"n": len(values), "mean": statistics.fmean(values), "median": statistics.median(values)}
    return out


# the development-split runs the studies compare with: generate_report's, but treehop by its question folds
VARIANTS_DEV = {**DEV_FRESH, "treehop": [QUESTION_FOLDS["dev"], "treehop-kfold-k5-h2"]}


def dev_side(method: str, runs_dev: Path, name: str) -> dict[str, Any]:
    """A method's development-split figure: a fresh run when there is one, else the summary bench/generate.sh
    recorded of it (bench/results/generate-NAME/dev/ID.json; treehop: the pair-disjoint k-fold models, the
    question-fold figure its recorded studies were set beside), else
    what bench/generate_report.py falls back to."""
    fresh = dev_figures(method, runs_dev, Path("bench/results"), VARIANTS_DEV)
    if fresh.get("run_id"):
        return fresh
    for rid in VARIANTS_DEV.get(method, []):
        path = Path("bench/results") / f"generate-{name}" / "dev" / f"{rid}.json"
        if path.is_file():
            return {**figures(load(path)), "source": f"recorded: {path}"}
    return fresh


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--study", choices=sorted(STUDIES), required=True)
    ap.add_argument("--name", default="multihop-rag")
    ap.add_argument("--out", type=Path, default=None, help="default runs/bench-generate-STUDY")
    ap.add_argument("--dev", type=Path, required=True)
    ap.add_argument("--dev-runs", type=Path, default=None, help="fresh development-split runs (default "
                    "runs/bench-generate/NAME/runs-dev)")
    ap.add_argument("--variants", nargs="+", required=True)
    ap.add_argument("--methods", nargs="+", choices=list(METHODS), required=True)
    ap.add_argument("--json", type=Path, required=True)
    ap.add_argument("--command", required=True)
    args = ap.parse_args(argv)
    args.out = args.out or Path(f"runs/bench-generate-{args.study}")
    title, what = STUDIES[args.study]
    methods = [m for m in METHODS if m in args.methods]
    from mhgraph.embeddings import load_embedder

    runs_dev = args.dev_runs or Path("runs/bench-generate") / args.name / "runs-dev"
    dev = {m: dev_side(m, runs_dev, args.name) for m in methods}
    embedder = load_embedder("all-MiniLM-L6-v2")
    record: dict[str, Any] = {
        "what": what, "methods": methods,
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="minutes"), "machine": machine(),
        "versions": versions(), "command": args.command, "corpus": args.name, "dev_questions": DEV_LABEL,
        "dev": {m: {k: dev[m].get(k) for k in ("hits@10", "recall@10", "source")} for m in methods},
        "dev_coherence": coherence(args.dev, embedder), "dev_overlap": overlap(args.dev)["all"]["mean"],
        "variants": {},
    }
    for v in args.variants:
        base = args.out / args.name / v
        summary = load(base / "questions.summary.json")
        gen = {m: figures(load(p)) for m in methods if (p := base / "runs" / RUN_ID[m] / "report.json").is_file()}
        entry: dict[str, Any] = {
            "command": load(base / "generate.json")["command"] if (base / "generate.json").is_file() else None,
            "generate_seconds": load(base / "generate.json")["wall_seconds"] if (base / "generate.json").is_file()
            else summary["seconds"].get("total"),
            "request": summary["request"], "questions": summary["questions"], "by_type": summary["by_type"],
            "hops": summary["hops"], "rejected": summary["checks"]["rejected"],
            "overlap": summary["checks"]["lexical_overlap"], "coherence": coherence(base / "questions.json", embedder),
            "methods": gen, "kendall": {}, "distance": {}}
        for metric in ("recall@10", "hits@10"):
            g = {m: gen[m][metric] for m in gen}
            d = {m: dev[m][metric] for m in methods}
            entry["kendall"][metric] = {"all": tau(g, d, methods),
                                        "without treehop": tau(g, d, [m for m in methods if m != "treehop"])}
            if "claims" in methods:
                entry["kendall"][metric]["without claims"] = tau(g, d, [m for m in methods if m != "claims"])
            gaps = [abs(g[m] - d[m]) for m in g if g[m] is not None and d.get(m) is not None]
            entry["distance"][metric] = statistics.fmean(gaps) if gaps else None
        record["variants"][v] = entry
    args.json.write_text(json.dumps(record, indent=1, default=str) + "\n", encoding="utf-8")

    V = args.variants
    L = [f"# {title}", "",
         f"- generated: {args.name}'s claim layer, **offline templates** (`--llm-backend none`, seed 0, "
         + ", ".join(f"{v} {record['variants'][v]['questions']:,}" for v in V)
         + " questions; no language model wrote them); variants: "
         + "; ".join(f"`{v}`: `{record['variants'][v]['command'] or '-'}`" for v in V),
         (f"- real: {DEV_LABEL} ({args.dev}); official rule (MultiHop-RAG's retrieval_evaluate.py), Hits@10 and "
         "Recall@10 over the questions with evidence; development figures as bench/generate_report.py takes them "
         "(bench/generate.sh's dev step: fresh runs, else its recorded summaries; treehop there: the pair-disjoint "
         "k-fold models)"),
         f"- date (UTC): {record['date']}; machine: {describe(record['machine'])}, CPU only, shared with "
         "other work (timings are indicative); " + ", ".join(f"{k} {v}" for k, v in record["versions"].items() if v),
         f"- command: `{args.command}`",
         ("- models: embeddings all-MiniLM-L6-v2; treehop on the generated sets: the **packaged model** (trained on "
         "the development split's questions, never on these); ircot, decompose: the offline strategies; metarag: the "
         "rules filter, no reranking; "
         + ("claims: the offline claim layer (spaCy). " if "claims" in methods
            else "`claims` not run here (bench/generate.sh runs it). ")
         + "None of these are a language model's figures."),
         "- Kendall's τ: τ-b with its two-sided p (scipy.stats.kendalltau) between a set's column and dev's.", ""]
    for metric in ("recall@10", "hits@10"):
        L += [f"## Official {metric[:-3].capitalize()}@10", ""]
        rows = []
        for m in methods:
            cells = [LABEL.get(m, m), f(dev[m][metric])]
            cells += [f((record["variants"][v]["methods"].get(m) or {}).get(metric)) for v in V]
            rows.append(cells)
        rows.append([f"**Kendall's τ against dev, {len(methods)} methods**", ""]
                    + [tau_cell(record["variants"][v]["kendall"][metric]["all"]) for v in V])
        for cut in ("without claims", "without treehop"):
            if cut in record["variants"][V[0]]["kendall"][metric]:
                rows.append([f"Kendall's τ, {cut}", ""]
                            + [tau_cell(record["variants"][v]["kendall"][metric][cut]) for v in V])
        rows.append(["mean distance from dev", ""] + [f(record["variants"][v]["distance"][metric]) for v in V])
        L += table(["method", "dev"] + V, rows) + [""]
        for v in V:
            disc = record["variants"][v]["kendall"][metric]["all"].get("discordant") or []
            L.append(f"- {v}, discordant pairs: " + (", ".join(f"{a}–{b}" for a, b in disc) or "none"))
        L.append("")
    L += ["## The questions", "",
          ("Evidence coherence: per question, the mean cosine between its facts' embeddings (all-MiniLM-L6-v2), "
          "averaged by type. Lexical overlap: the share of a question's content words its facts hold. Generate s: "
           "wall seconds on this machine while other runs shared its 2 cores, so not comparable between rows."), ""]
    rows = [["development split", "-", "-"] + [f(record["dev_coherence"].get(t, {}).get("mean")) for t in TYPES]
            + [f(record["dev_overlap"]), "-"]]
    for v in V:
        e = record["variants"][v]
        rows.append([v, str(e["questions"]), ", ".join(f"{h}: {n}" for h, n in e["hops"].items())]
                    + [f(e["coherence"].get(t, {}).get("mean")) for t in TYPES]
                    + [f(e["overlap"]), "-" if e["generate_seconds"] is None else f"{e['generate_seconds']:.0f}"])
    L += table(["set", "questions", "hops (0: null)", "coherence inference", "coherence comparison",
                "coherence temporal", "lexical overlap", "generate s"], rows) + [""]
    for v in V:
        L.append(f"- {v}, rejected: " + ", ".join(f"{k} {n}" for k, n in record["variants"][v]["rejected"].items()))
    L.append("")
    print("\n".join(L))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

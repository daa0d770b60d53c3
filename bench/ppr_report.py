"""Graph traversal (`ppr`) beside other methods per question type: bench/results/ppr-NAME.md and .json.

Reads each run folder's report.json (mhgraph eval) and tabulates, under the official rule and
ours, Hits@4, Hits@10 and Recall@10 overall and per question type, with each run's latency. With
--choose RUN (repeated), it also chooses among those runs 5-fold by question (bench/kfold.py: per
fold, the best official Recall@10 on the other folds) and reports the held-out scores: how ppr's
defaults were chosen, and what they score on questions the choice did not see.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from pathlib import Path
from statistics import fmean

from mhgraph.claims.extract import OFFLINE_LABEL

from environment import describe, machine, versions
from kfold import FOLDS, SELECT_BY, choose, fold_of, official_scores
from markdown import f, neo4j_server, runs_report_parser, table

METRICS = ("hits@4", "hits@10", "recall@10")


def main() -> None:
    parser = runs_report_parser(__doc__)
    parser.add_argument("--choose", action="append", default=[],
                        help="a run (by folder name) among which ppr's settings are chosen k-fold by question")
    args = parser.parse_args()
    reports = {Path(r).name: json.loads((Path(r) / "report.json").read_text()) for r in args.runs}
    types = sorted({t for r in reports.values() for t in r["official"]["by_type"]})
    rows, record = [], {}
    for run, r in reports.items():
        official = r["official"]
        ours = {"overall": r["overall"]["ranking"] if "ranking" in r["overall"] else r["overall"],
                **{t: r["by_type"][t]["ranking"] for t in types}}
        record[run] = {"method": r["method"], "params": r["params"], "latency_ms": r["latency_ms"],
                       "scored": official["questions"],
                       "official": {"overall": {m: official["overall"][m] for m in METRICS},
                                    **{t: {m: official["by_type"][t][m] for m in METRICS} for t in types}},
                       "ours": {g: {m: ours[g].get(m) for m in METRICS} for g in ours}}
        rows.append(run)
    date = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%MZ")
    info = machine()
    # a pipeline leaves out the questions its reasoning stages take demonstrations from
    counts = Counter(r["official"]["questions"] for r in reports.values())
    n = counts.most_common(1)[0][0]
    others = "; ".join(f"{c} by {', '.join(f'`{run}`' for run, r in reports.items() if r['official']['questions'] == c)}"
                       for c in counts if c != n)
    others = f" ({others})" if others else ""
    lines = [f"# Graph traversal (`ppr`) on {args.name}: per question type", "",
             f"- questions: development split (2,045 questions) ({args.questions}); {n} with evidence scored{others}, "
             "null questions skipped",
             f"- date (UTC): {date}; machine: {describe(info)}, CPU only, shared with other work; "
             f"Neo4j {neo4j_server()}",
             f"- command: `{args.command}`; every method offline (no language model); all-MiniLM-L6-v2; "
             f"256/32-token chunks; the claim layer by the {OFFLINE_LABEL}", "",
             "## Official rule (MultiHop-RAG retrieval_evaluate.py)", ""]
    header = ["run", "p50 ms", "Hits@4", "Hits@10", "Recall@10",
              *(f"{t.removesuffix('_query')} Hits@10 / Recall@10" for t in types)]
    body = []
    for run in rows:
        o = record[run]["official"]
        body.append([f"`{run}`", f"{record[run]['latency_ms']['p50']:.0f}",
                     *(f(o["overall"][m]) for m in METRICS),
                     *(f"{f(o[t]['hits@10'])} / {f(o[t]['recall@10'])}" for t in types)])
    lines += table(header, body)
    lines += ["", "## Ours (gold chunks by containment or span overlap)", ""]
    body = []
    for run in rows:
        o = record[run]["ours"]
        body.append([f"`{run}`", f"{record[run]['latency_ms']['p50']:.0f}", *(f(o["overall"][m]) for m in METRICS),
                     *(f"{f(o[t]['hits@10'])} / {f(o[t]['recall@10'])}" for t in types)])
    lines += table(header, body)
    lines += ["", "Runs: " + "; ".join(f"`{run}`: {record[run]['method']} "
                                       + ", ".join(f"{k}={v}" for k, v in record[run]["params"].items()
                                                   if k not in ("corpus", "graph"))
                                       for run in rows), ""]
    unknown = sorted(set(args.choose) - set(reports))
    if unknown:
        parser.error(f"--choose names no run given: {', '.join(unknown)}")
    selection = None
    if args.choose:
        selection = choose_settings([p for p in map(Path, args.runs) if p.name in args.choose])
        lines += selection_lines(selection, types)
    print("\n".join(lines))
    Path(args.json).write_text(json.dumps({"name": args.name, "date": date, "machine": describe(info),
                                           "versions": versions(), "command": args.command,
                                           "questions": "development split (2,045 questions)",
                                           "runs": record, "selection": selection}, indent=1) + "\n")


def choose_settings(folders: list[Path]) -> dict:
    """The k-fold choice among these runs, with the held-out scores overall and per question type."""
    scores = {p.name: official_scores(p) for p in folders}
    types = {r["id"]: r["type"] for r in json.loads((folders[0] / "results.json").read_text())}
    common = sorted(set.intersection(*(set(s) for s in scores.values())))
    folds, kfold = choose(scores, [p.name for p in folders], common, METRICS)
    chosen = {fold["fold"]: fold["chosen"] for fold in folds}
    held = {q: scores[chosen[fold_of(q)]][q] for q in common}
    by_type = {t: {m: fmean(held[q][m] for q in common if types[q] == t) for m in METRICS}
               for t in sorted({types[q] for q in common})}
    return {"by": SELECT_BY, "among": [p.name for p in folders], "scored": len(common), "folds": folds,
            "kfold": kfold, "kfold_by_type": by_type}


def selection_lines(selection: dict, types: list[str]) -> list[str]:
    won = Counter(fold["chosen"] for fold in selection["folds"])
    k = selection["kfold"]
    return ["", f"## The settings' choice, {FOLDS}-fold by question", "",
            (f"Among {', '.join(f'`{r}`' for r in selection['among'])}: each fold's run is the one with the best "
             f"official {SELECT_BY} on the other {FOLDS - 1} folds, scored on that fold ({selection['scored']} "
             f"questions scored by every run). Chosen: {', '.join(f'`{r}` in {n} folds' for r, n in won.items())}."),
            "", *table(["held-out folds", "Hits@4", "Hits@10", "Recall@10",
                        *(f"{t.removesuffix('_query')} Hits@10 / Recall@10" for t in types)],
                       [["k-fold", *(f(k[m]) for m in METRICS),
                         *(f"{f(selection['kfold_by_type'][t]['hits@10'])} / "
                           f"{f(selection['kfold_by_type'][t]['recall@10'])}" for t in types)]]), ""]


if __name__ == "__main__":
    main()

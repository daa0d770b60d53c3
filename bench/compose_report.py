"""A search over composed pipelines: bench/results/compose-NAME.md and .json.

Reads each run folder's report.json and results.json (mhgraph eval), tables the pipelines under
the official rule with latency, and chooses the best pipeline k-fold by question: for each fold,
the pipeline with the best official Recall@10 on the other folds, scored on the held-out fold. The
k-fold figure is what choosing a pipeline here is worth on questions the choice did not see; the
best row of the table is an in-sample maximum.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from pathlib import Path

from environment import describe, machine, versions
from kfold import FOLDS, SELECT_BY, official_scores
from kfold import choose as choose_runs
from markdown import f, neo4j_server, runs_report_parser, table

from mhgraph.compose.stages import STAGES

METRICS = ("hits@4", "hits@10", "recall@10")
GOAL = {"recall@10": 0.70, "hits@4": 0.85, "p50_ms": 150}
IN_DOMAIN_GOAL = {"recall@10": 0.85, "hits@4": 0.90}


def in_domain(params: dict) -> bool:
    """Whether a run used a model trained on this split's questions (its own or a stage's params say so)."""
    return bool(params.get("in_domain_trained")) or any(isinstance(v, dict) and in_domain(v) for v in params.values())


def trained_parts(params: dict, generated: bool = False) -> list[str]:
    """What a run's models trained on this corpus are, from its params: TreeHop's and the reranker's records."""
    parts = []
    treehop = [v["treehop_model"] for v in params.values()
               if isinstance(v, dict) and v.get("in_domain_trained") and "treehop_model" in v]
    if treehop:
        parts.append("TreeHop" + ("" if generated else f" ({treehop_folds(treehop[0])})"))
    if (params.get("reranker_training") or {}).get("in_domain_trained"):
        parts.append(f"cross-encoder `{params.get('reranker')}`")
    return parts


def treehop_folds(model: str) -> str:
    """How a k-fold TreeHop's folds were cut, from its name (TreeHopModels.load writes it there)."""
    if "trained on all" in model:     # one model trained on every question (TreeHopModels.load's name)
        return "trained on every question: not held out"
    kind = next((k for k in ("evidence-disjoint", "pair-disjoint") if k in model), None)
    return (f"k-fold by question, {kind} folds" if kind
            else "k-fold by question; other questions on a held-out one's evidence are in training")


def stage_position(phase: str) -> int:
    """Where a run's timed phase comes in the pipeline (STAGES' order; unknown ones last)."""
    stage = {"fusion": "fuse"}.get(phase.split(":")[0], phase.split(":")[0])
    return STAGES.index(stage) if stage in STAGES else len(STAGES)


def shape(params: dict) -> tuple:
    """A pipeline without its models: the stages with the reranker's name dropped (the chunks it
    scored kept: rerank=*:N), and the weights."""
    scored = params.get("rerank_k")    # what ran: the line's :N, else the option's
    stages = " ".join(s if not s.startswith("rerank=") or s == "rerank=none" else f"rerank=*:{scored}"
                      for s in str(params.get("stages", "")).split())
    return stages, params.get("rerank_weight") if params.get("reranker") else None, params.get("expand_weight", 1.0)


def expand_weights(params: dict) -> dict[str, float]:
    """Each expansion's weight in the fusion as it ran: its own in the stages line, else the option's."""
    from mhgraph.compose.stages import parse_stages

    stages = parse_stages(str(params.get("stages", "")))
    return {name: stages.weight(name, params.get("expand_weight", 1.0)) for name in stages.expand}


def stages_cell(params: dict) -> str:
    """The stages line, with the pool an expansion joins (candidates and its chunks), the
    expansions' and the reranker's fusion weights where set, and a rank fusion."""
    weights = ([f"{params['candidate_k']} candidates, {params['expand_k']} chunks per expansion"]
               if expand_weights(params) and "candidate_k" in params else [])
    weights += [f"expand weight {params['expand_weight']:g}"] if "expand_weight" in params else []
    weights += [f"rerank weight {params['rerank_weight']:g}"] if params.get("reranker") else []
    weights += ([f"fused by ranks, k {params['rerank_rrf_k']}"] if params.get("rerank_fusion") == "ranks" else [])
    return f"`{params.get('stages')}`" + (f" ({', '.join(weights)})" if weights else "")


def main() -> None:
    parser = runs_report_parser(__doc__)
    parser.add_argument("--ablation", action="append", default=[],
                        help="a run that takes a stage away from the chosen pipeline (by folder name; not chosen from)")
    parser.add_argument("--shippable", action="append", default=[],
                        help="a run whose pipeline may ship as the preset (by folder name); given any, the preset is "
                             "also chosen k-fold among these alone (the others may call a language model when one is "
                             "configured, or read questions by one benchmark's wording)")
    parser.add_argument("--generated", action="append", default=[],
                        help="a run whose model was trained only on generated questions (by folder name)")
    args = parser.parse_args()
    reports, scores = {}, {}
    for folder in map(Path, args.runs):
        reports[folder.name] = json.loads((folder / "report.json").read_text())
        scores[folder.name] = official_scores(folder)
    generated = [r for r in reports if r in args.generated]
    trained = [r for r in reports if in_domain(reports[r]["params"]) and r not in generated]
    # the choice is among training-free pipelines
    runs = [r for r in reports if r not in trained and r not in generated and r not in args.ablation]
    common = sorted(set.intersection(*(set(s) for s in scores.values())))

    def choose(among: list[str]) -> tuple[list[dict], dict[str, float]]:
        return choose_runs(scores, among, common, METRICS)

    chosen, kfold = choose(runs)
    unknown = sorted(set(args.shippable) - set(runs))
    if unknown:
        raise SystemExit(f"error: --shippable {', '.join(unknown)}: not a training-free run given "
                         f"(runs: {', '.join(runs)})")
    shippable = [r for r in runs if r in args.shippable]
    preset_choice = choose(shippable) if shippable else None
    trained_choice = choose(trained) if trained else None
    record = {}
    for run, r in reports.items():
        record[run] = {"stages": r["params"].get("stages"), "expand_weight": r["params"].get("expand_weight", 1.0),
                       "expand_weights": expand_weights(r["params"]),
                       "in_domain": run in trained,
                       "trained_on_generated": run in generated, "latency_ms": r["latency_ms"],
                       "phases_ms": r.get("phases_ms"),
                       "official": {m: r["official"]["overall"][m] for m in METRICS},
                       "official_by_type": {t: {m: v[m] for m in METRICS} for t, v in r["official"]["by_type"].items()}}
    date = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%MZ")
    info = machine()
    best_in_sample = max(runs, key=lambda r: (record[r]["official"][SELECT_BY], r))
    lines = [f"# Composed pipelines on {args.name}: a search", "",
             f"- questions: development split (2,045 questions) ({args.questions}); {len(common)} with evidence "
             "scored by every run, null questions skipped; official rule (MultiHop-RAG retrieval_evaluate.py)",
             f"- date (UTC): {date}; machine: {describe(info)}, CPU only, shared with other work (latency "
             f"under load); Neo4j {neo4j_server()}",
             f"- command: `{args.command}`; every stage offline (no language model: the filter by rules, IR-CoT's "
             "offline strategy); all-MiniLM-L6-v2; 256/32-token chunks; models trained here only where a row says "
             "in-domain (k-fold by question) or trained on generated questions", "",
             "## Pipelines", ""]
    body = [[f"`{run}`" + (" **in-domain**" if run in trained else "")
             + (" **trained on generated questions**" if run in generated else "")
             + (" (ablation)" if run in args.ablation else ""), stages_cell(reports[run]["params"]),
             f"{record[run]['latency_ms']['p50']:.0f}", f"{record[run]['latency_ms']['p95']:.0f}",
             *(f(record[run]['official'][m]) for m in METRICS)]
            for run in reports]
    lines += table(["run", "stages", "p50 ms", "p95 ms", "Hits@4", "Hits@10", "Recall@10"], body)
    # the stages in the order they run: a run times expand:METHOD and fusion where the line says expand and fuse
    stage_names = sorted(dict.fromkeys(s for r in reports.values() for s in (r.get("phases_ms") or {})),
                         key=lambda s: (stage_position(s), s))
    if stage_names:
        lines += ["", "Each stage's time per question, p50 / p95 ms (- where a run has no such stage):", ""]
        lines += table(["run", *stage_names],
                       [[f"`{run}`", *(f"{p['p50']:.0f} / {p['p95']:.0f}"
                                       if (p := (r.get("phases_ms") or {}).get(s)) else "-" for s in stage_names)]
                        for run, r in reports.items()])
    lines += ["", f"## The choice, {FOLDS}-fold by question", "",
              f"Each fold's pipeline is the one with the best official {SELECT_BY} on the other {FOLDS - 1} folds; "
              "it is scored on the held-out fold.", ""]
    lines += table(["fold", "chosen", "questions", "Hits@4", "Hits@10", "Recall@10"],
                   [[str(c["fold"]), f"`{c['chosen']}`", str(c["test_questions"]), *(f(c[m]) for m in METRICS)]
                    for c in chosen])
    lines += ["", f"k-fold: Hits@4 {f(kfold['hits@4'])}, Hits@10 {f(kfold['hits@10'])}, Recall@10 "
              f"{f(kfold['recall@10'])}; the best in-sample row (`{best_in_sample}`): Recall@10 "
              f"{f(record[best_in_sample]['official']['recall@10'])}.", ""]
    # the preset: the choice among the pipelines that may ship when given, else among all
    preset, preset_run = kfold, best_in_sample
    if preset_choice:
        picks, preset = preset_choice
        folds_won = Counter(c["chosen"] for c in picks)      # in the order first chosen
        preset_run = folds_won.most_common(1)[0][0]
        lines += [(f"The preset's choice, {FOLDS}-fold by question among the pipelines that may ship "
                   f"({', '.join(f'`{r}`' for r in shippable)}): chosen "
                   + ", ".join(f"`{r}` in {n} folds" for r, n in folds_won.items())
                   + f"; Hits@4 {f(preset['hits@4'])}, Hits@10 {f(preset['hits@10'])}, Recall@10 "
                   f"{f(preset['recall@10'])} on the held-out folds."), ""]
    p50 = record[preset_run]["latency_ms"]["p50"]
    met = {"recall@10": preset["recall@10"] >= GOAL["recall@10"], "hits@4": preset["hits@4"] >= GOAL["hits@4"],
           "p50_ms": p50 <= GOAL["p50_ms"]}
    lines += [f"Goal for the training-free preset: Recall@10 >= {GOAL['recall@10']} ({'met' if met['recall@10'] else 'not met'}), "
              f"Hits@4 >= {GOAL['hits@4']} ({'met' if met['hits@4'] else 'not met'}), p50 <= {GOAL['p50_ms']} ms "
              f"({'met' if met['p50_ms'] else 'not met'}: {p50:.0f} ms, under load).", ""]
    for run in trained:
        o = record[run]["official"]
        ok = {m: o[m] >= IN_DOMAIN_GOAL[m] for m in IN_DOMAIN_GOAL}
        lines += [f"In-domain (`{run}`: {' and '.join(trained_parts(reports[run]['params'])) or 'a model trained here'}; "
                  f"no question scored by a model that saw it): Recall@10 {f(o['recall@10'])} against the goal "
                  f"{IN_DOMAIN_GOAL['recall@10']} ({'met' if ok['recall@10'] else 'not met'}), Hits@4 "
                  f"{f(o['hits@4'])} against {IN_DOMAIN_GOAL['hits@4']} ({'met' if ok['hits@4'] else 'not met'}).", ""]
    if trained_choice and len(trained) > 1:
        picks, held_out = trained_choice
        lines += [f"The in-domain choice, {FOLDS}-fold by question among {', '.join(f'`{r}`' for r in trained)} "
                  f"(chosen: {', '.join(sorted({c['chosen'] for c in picks}))}): Hits@4 {f(held_out['hits@4'])}, "
                  f"Hits@10 {f(held_out['hits@10'])}, Recall@10 {f(held_out['recall@10'])}; goals "
                  f"Recall@10 >= {IN_DOMAIN_GOAL['recall@10']} "
                  f"({'met' if held_out['recall@10'] >= IN_DOMAIN_GOAL['recall@10'] else 'not met'}), Hits@4 >= "
                  f"{IN_DOMAIN_GOAL['hits@4']} ({'met' if held_out['hits@4'] >= IN_DOMAIN_GOAL['hits@4'] else 'not met'}).", ""]
    free = kfold["recall@10"]
    for run in generated:
        o = record[run]["official"]
        what = " and ".join(trained_parts(reports[run]["params"], generated=True)) or "a model"
        line = (f"Trained without a benchmark question (`{run}`: {what} trained only on questions `mhgraph generate` "
                f"made from the corpus, offline templates; scored on the real questions): Recall@10 "
                f"{f(o['recall@10'])}, Hits@4 {f(o['hits@4'])}, against the training-free choice's {f(free)} / "
                f"{f(kfold['hits@4'])}")
        # the in-domain run of the same pipeline, its model trained on the real questions instead
        for t in (t for t in trained if shape(reports[t]["params"]) == shape(reports[run]["params"])):
            gain = record[t]["official"]["recall@10"] - free
            share = (o["recall@10"] - free) / gain if gain > 0 else None
            line += f"; the same pipeline in-domain (`{t}`) gains {gain:+.3f} Recall@10"
            if o["recall@10"] < free:
                line += (f", and this falls {free - o['recall@10']:.3f} below the training-free choice: goal (two "
                         "thirds of the gain) not met")
            else:
                line += (", of which this keeps " + ("-" if share is None else f"{share:.0%}")
                         + f" (goal: two thirds; {'met' if share is not None and share >= 2 / 3 else 'not met'})")
        lines += [line + ".", ""]
    print("\n".join(lines))
    Path(args.json).write_text(json.dumps({
        "name": args.name, "date": date, "machine": describe(info), "versions": versions(), "command": args.command,
        "questions": "development split (2,045 questions)", "scored": len(common), "runs": record,
        "in_domain": trained, "trained_on_generated": generated,
        "in_domain_selection": ({"by": SELECT_BY, "among": trained, "folds": trained_choice[0], "kfold": trained_choice[1],
                                 "goal": IN_DOMAIN_GOAL} if trained_choice else None),
        "selection": {"by": SELECT_BY, "among": runs, "folds": chosen, "kfold": kfold, "best_in_sample": best_in_sample,
                      "goal": GOAL, "met": met},
        "preset_selection": ({"by": SELECT_BY, "among": shippable, "folds": preset_choice[0], "kfold": preset_choice[1],
                              "goal": GOAL, "met": met} if preset_choice else None)}, indent=1) + "\n")


if __name__ == "__main__":
    main()

"""The record of bench/generate.sh (issue 25, "Measured"): does a question set written by `mhgraph generate`
rank the retrieval methods as the real questions do, and is its difficulty D calibrated?

    python bench/generate_report.py --name multihop-rag --flat multihop-rag-flat --out runs/bench-generate \
        --dev ../shared/data/multihop-rag/MultiHopRAG.json --command CMD --json bench/results/generate-NAME.json \
        [--notes bench/generate_notes.md] > bench/results/generate-NAME.md

Reads OUT/NAME/runs-generated/ID/report.json (the eight methods on the generated set), the development split's
figure of each method (a fresh run under OUT/NAME/runs-dev/ when there is one, else the recorded summary named in
DEV_RECORDED: the architecture rerun's figures, made with the current code and these arguments), the
generation records (bench/results/generate-NAME/*-generate.json) and the question files. Computes

- Kendall's tau (scipy.stats.kendalltau, tau-b, two-sided p) between the methods' official-rule Hits@10 on the
  generated set and on the development split, and the same for Recall@10; with and without `claims`;
  the discordant pairs (where the rankings disagree);
- the lexical overlap (mhgraph.generate.pipeline.lexical_overlap: the share of a question's content words
  its evidence facts hold) of every question set;
- the difficulty calibration: per question D (computed by eval: h - mean cosine(question, gold chunks)) and
  vector's official Recall@10 from the vector run's results.json; equal-count D bins
  (mhgraph.eval.difficulty.quantile_edges) of at least MIN_BIN questions; Pearson r (scipy.stats.pearsonr)
  between a bin's mean D and its miss rate 1 - Recall@10; also by hop count h alone.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import sys
from collections import Counter
from dataclasses import asdict
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
from environment import describe, machine, versions
from markdown import f, table
from scipy.stats import kendalltau, pearsonr

from mhgraph.eval.calibration import (
    CalibrationBin,
    calibrate,
    calibration_report,
    equal_count_bins,
    fit_similarity_weight,
    pearson,
    points_from_results,
)
from mhgraph.generate.pipeline import lexical_overlap

# method -> (run id on the generated set, its arguments)
METHODS: dict[str, tuple[str, str]] = {
    "vector": ("vector-k10", "--method vector -k 10"),
    "bm25": ("bm25-k10", "--method bm25 -k 10"),
    "hybrid": ("hybrid-k10", "--method hybrid -k 10 (linear ranker, alpha 0.5)"),
    "metarag": ("metarag-rules-k10", "--method metarag --filter-extractor rules -k 10 --no-rerank"),
    "treehop": ("treehop-packaged-k5-h2", "--method treehop -k 5 --hops 2"),
    "ircot": ("ircot-offline-k5", "--method ircot -k 5 --llm-backend none"),
    "decompose": ("decompose-offline-n3-k5", "--method decompose --sub-questions 3 -k 5 --llm-backend none"),
    "claims": ("claims-offline-k8", "--method claims -k 8 --llm-backend none"),
}
# the development split's figure when no fresh run is under runs-dev/: (architecture rerun's run name, or a
# summary under bench/results/)
DEV_RECORDED: dict[str, str] = {
    "vector": "arch:vector-k10", "bm25": "arch:bm25-k10", "hybrid": "arch:hybrid-linear-k10",
    "metarag": "arch:metarag-rules-k10", "treehop": "treehop-multihop-rag/treehop-k5-h5-all.json",
    "ircot": "arch:ircot-offline-k5", "decompose": "arch:decompose-offline-n3-k5", "claims": "arch:claims-offline-k8",
}
# the recorded dev-split summary per method (architecture_rerun.RUNS), for its per-type figures
DEV_BY_TYPE: dict[str, str] = {
    "vector": "baselines-multihop-rag/vector-k10.json", "bm25": "baselines-multihop-rag/bm25-k10.json",
    "hybrid": "baselines-multihop-rag/hybrid-linear-k10.json", "metarag": "metarag-multihop-rag/metarag-rules-k10.json",
    "treehop": "treehop-multihop-rag/treehop-k5-h5-all.json", "ircot": "reasoning-multihop-rag/ircot-offline-k5.json",
    "decompose": "reasoning-multihop-rag/decompose-offline-n3-k5.json",
    "claims": "claims-multihop-rag/claims-offline-k8.json",
}
# treehop with evidence-disjoint k-fold models (no gold chunk of a held-out question in any training example), run
# id on both sets: the real questions reuse their evidence, so question folds let a fold model learn most of a
# held-out question's gold chunks from other questions (the "what the models saw" table measures it)
EVIDENCE_DISJOINT = "treehop-evidencedisjoint-k5-h2"
# the question-fold runs: k-fold by question on the generated set, pair-disjoint on the development split (no hop of
# a held-out question among the training examples); the ranking before the evidence-disjoint runs
QUESTION_FOLDS = {"generated": "treehop-kfold-k5-h2", "dev": "treehop-pairdisjoint-k5-h2"}
# the run ids preferred under runs-dev/ (fresh runs of the current code): the same as on the generated set, but
# treehop, which on the real questions is scored by its k-fold models only: the evidence-disjoint ones when run,
# else the pair-disjoint ones, else the ordinary ones
DEV_FRESH = {**{m: [rid] for m, (rid, _) in METHODS.items()},
             "treehop": [EVIDENCE_DISJOINT, QUESTION_FOLDS["dev"], "treehop-kfold-k5-h2"]}
# treehop on the generated set: its own k-fold models (trained on the generated questions' folds; evidence-disjoint
# when run) beside the packaged model (trained on the development split: the transfer to other questions)
GEN_KFOLD = {"treehop": [EVIDENCE_DISJOINT, QUESTION_FOLDS["generated"]]}
ROUNDS = 1000      # random splits / bootstrap resamples for the agreement intervals
LABEL = {
    "treehop": "treehop",
    "ircot": "ircot (offline strategy)", "decompose": "decompose (offline strategy)",
    "claims": "claims (offline claim layer)", "metarag": "metarag (rules filter)",
}
DEV_LABEL = "MultiHop-RAG, development split (2,045 questions)"


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def figures(report: dict[str, Any]) -> dict[str, float | None]:
    off = (report.get("official") or {}).get("overall", {})
    return {"hits@10": off.get("hits@10"), "recall@10": off.get("recall@10"), "n": off.get("n")}


def dev_figures(method: str, runs_dev: Path, recorded: Path, prefer: dict[str, list[str]] = DEV_FRESH) -> dict[str, Any]:
    fresh = next((rid for rid in prefer.get(method, []) if (runs_dev / rid / "report.json").is_file()), None)
    if fresh:
        rep = load(runs_dev / fresh / "report.json")
        return {**figures(rep), "source": f"fresh run {runs_dev / fresh}", "report": rep, "run_id": fresh,
                "results": runs_dev / fresh / "results.json"}
    ref = DEV_RECORDED[method]
    if ref.startswith("arch:"):
        arch = load(recorded / "architecture-rerun-multihop-rag.json")
        run = next(r for r in arch["runs"] if r["run"] == ref[5:])
        fig = run["figures"]["new"]
        return {"hits@10": fig.get("official hits@10"), "recall@10": fig.get("official recall@10"),
                "n": fig.get("scored"), "report": None,
                "source": f"recorded: bench/results/architecture-rerun-multihop-rag.json, run {ref[5:]} (new code), "
                          f"{run['new_args']}"}
    rep = load(recorded / ref)
    fig = {**figures(rep), "source": f"recorded: bench/results/{ref}", "report": rep}
    if fig["recall@10"] is None:   # recorded before the official rule had Recall@10: our rule's, as a stand-in
        fig["recall@10"] = (rep.get("overall") or {}).get("ranking", {}).get("recall@10")
        fig["recall_rule"] = "ours (stand-in: the official Recall@10 was not recorded)"
        fig["source"] += " (Recall@10: our rule's, as the official one was not recorded for this run)"
    return fig


def tau(gen: dict[str, float | None], dev: dict[str, float | None], methods: list[str]) -> dict[str, Any]:
    both = [m for m in methods if gen.get(m) is not None and dev.get(m) is not None]
    if len(both) < 3:
        return {"methods": both, "tau": None, "p": None}
    t = kendalltau([gen[m] for m in both], [dev[m] for m in both])
    discordant = [(a, b) for a, b in combinations(both, 2) if (gen[a] - gen[b]) * (dev[a] - dev[b]) < 0]
    return {"methods": both, "tau": float(t.statistic), "p": float(t.pvalue), "discordant": discordant,
            "left_out": [m for m in methods if m not in both]}


def per_question(results: Path) -> dict[str, dict[str, float]]:
    """Official Hits@10 and Recall@10 of every question with gold evidence, by question id."""
    if not results.is_file():
        return {}
    return {q["id"]: {"hits@10": q["official"]["hits@10"], "recall@10": q["official"]["recall@10"]}
            for q in load(results) if (q.get("official") or {}).get("facts")}


def _matrix(runs: dict[str, dict[str, dict[str, float]]], methods: list[str], metric: str) -> np.ndarray:
    """Questions (those every method scored) x methods."""
    common = sorted(set.intersection(*(set(runs[m]) for m in methods)))
    return np.array([[runs[m][q][metric] for m in methods] for q in common])


def _tau(a: np.ndarray, b: np.ndarray) -> float:
    t = float(kendalltau(a, b).statistic)
    return 0.0 if np.isnan(t) else t     # nan (a constant side) counts as no agreement


def _interval(values: list[float]) -> dict[str, float]:
    v = np.asarray(values)
    return {"mean": float(v.mean()), "p05": float(np.quantile(v, 0.05)), "p95": float(np.quantile(v, 0.95)),
            "share_ge_0.7": float((v >= 0.7).mean())}


def agreement(gen_runs: dict[str, dict[str, dict[str, float]]], dev_runs: dict[str, dict[str, dict[str, float]]],
              methods: list[str], metric: str, rounds: int = ROUNDS, seed: int = 0) -> dict[str, Any]:
    """How far τ can be trusted. Split-half: the development split's questions cut at random into two halves, τ
    between the methods' means on the halves: how well the real questions agree with themselves (the ceiling a
    generated set can be asked to reach). Bootstrap: both sets' questions resampled with replacement, τ between
    the generated and the real means: the interval of the measured τ."""
    both = [m for m in methods if m in gen_runs and m in dev_runs]
    if len(both) < 3:
        return {"methods": both}
    rng = np.random.default_rng(seed)
    dev, gen = _matrix(dev_runs, both, metric), _matrix(gen_runs, both, metric)
    halves, boot = [], []
    for _ in range(rounds):
        order = rng.permutation(len(dev))
        first, second = order[: len(dev) // 2], order[len(dev) // 2:]
        halves.append(_tau(dev[first].mean(0), dev[second].mean(0)))
        boot.append(_tau(gen[rng.integers(0, len(gen), len(gen))].mean(0),
                         dev[rng.integers(0, len(dev), len(dev))].mean(0)))
    return {"methods": both, "rounds": rounds, "dev_questions": len(dev), "generated_questions": len(gen),
            "dev_split_half": _interval(halves), "bootstrap": _interval(boot)}


def ranking_agreement(gen: dict[str, float | None], dev: dict[str, float | None],
                      gen_pq: dict[str, dict[str, dict[str, float]]], dev_pq: dict[str, dict[str, dict[str, float]]],
                      methods: list[str], metric: str) -> dict[str, Any]:
    """Kendall's τ between the two sets' figures, with all `methods` and without claims, and how far each can be
    trusted (agreement over the per-question runs)."""
    no_claims = [m for m in methods if m != "claims"]
    return {"all": tau(gen, dev, methods), "without_claims": tau(gen, dev, no_claims),
            "agreement": {"all": agreement(gen_pq, dev_pq, methods, metric),
                          "without_claims": agreement(gen_pq, dev_pq, no_claims, metric)}}


def evidence_seen(results: list[dict[str, Any]], folds: dict[str, Any]) -> dict[str, float]:
    """Per question a k-fold TreeHop run scored (its results.json rows), the share of its gold chunks that are gold
    chunks of a question its fold model trained on (folds.json's training question ids): how much of its evidence
    that model has seen. An evidence-disjoint model was kept from every example with a held-out gold chunk, so those
    chunks are taken out."""
    disjoint = (folds.get("options") or {}).get("evidence_disjoint")
    gold = {q["id"]: set(q.get("gold") or ()) for q in results}
    out: dict[str, float] = {}
    for fold in folds["folds"]:
        training = set(fold["training_question_ids"])
        held_out = {q: g for q, g in gold.items() if q not in training and g}
        seen = set().union(*(gold.get(q, set()) for q in training))
        if disjoint:
            seen -= set().union(*held_out.values())
        out.update((q, len(g & seen) / len(g)) for q, g in held_out.items())
    return out


def seen_groups(run: Path, vector: Path) -> dict[str, Any] | None:
    """The k-fold TreeHop run's questions by how much of their evidence its fold models saw (none, some, all), with
    TreeHop's and vector's official Hits@10 and Recall@10 on each group."""
    report = run / "report.json"
    if not report.is_file() or not (run / "results.json").is_file():
        return None
    # the run records the model as its name: "DIR (in-domain trained, 5-fold, ...)"
    models = Path(((load(report).get("params") or {}).get("treehop_model") or "").split(" (")[0])
    if not (models / "folds.json").is_file():
        return None
    folds = load(models / "folds.json")
    seen = evidence_seen(load(run / "results.json"), folds)
    th, vec = per_question(run / "results.json"), per_question(vector)
    groups: dict[str, Any] = {}
    for label, keep in (("none", lambda s: s == 0), ("some", lambda s: 0 < s < 1), ("all", lambda s: s == 1)):
        ids = [q for q, s in seen.items() if keep(s) and q in th and q in vec]
        groups[label] = {"questions": len(ids),
                         **{f"{who} {metric}": (float(np.mean([pq[q][metric] for q in ids])) if ids else None)
                            for who, pq in (("treehop", th), ("vector", vec)) for metric in ("hits@10", "recall@10")}}
    scored = sum(g["questions"] for g in groups.values())
    return {"run": str(run), "models": str(models), "questions": scored,
            "training_examples": float(np.mean([fold["examples"] + fold["dev_examples"] for fold in folds["folds"]])),
            "mean_share_seen": float(np.mean([seen[q] for q in seen if q in th])) if scored else None,
            "groups": groups}


def shared_hops(path: Path) -> dict[str, int]:
    """How many generated questions share a hop (a pair of their gold chunks) with another question: what a
    k-fold TreeHop model can have seen of a held-out question."""
    pairs = [set(combinations(sorted(set(q.get("chunks") or [])), 2)) for q in load(path)]
    counts = Counter(p for ps in pairs for p in ps)
    with_hops = [ps for ps in pairs if ps]
    return {"questions": len(with_hops), "sharing": sum(any(counts[p] > 1 for p in ps) for ps in with_hops)}


def ranks(values: dict[str, float | None]) -> dict[str, int]:
    order = sorted((m for m in values if values[m] is not None), key=lambda m: -values[m])
    return {m: i for i, m in enumerate(order, 1)}


def overlap(path: Path) -> dict[str, Any]:
    qs = load(path)
    values: dict[str, list[float]] = {}
    for q in qs:
        facts = [e["fact"] for e in q.get("evidence_list") or []]
        if facts:
            v = lexical_overlap(q["query"], facts)
            values.setdefault("all", []).append(v)
            values.setdefault(q.get("question_type", "?"), []).append(v)
    return {k: {"n": len(v), "mean": statistics.fmean(v), "median": statistics.median(v),
                "share_ge_0.8": sum(x >= 0.8 for x in v) / len(v)} for k, v in sorted(values.items())}


def _rows(bins: list[CalibrationBin]) -> list[dict[str, float]]:
    return [{"lo": b.low, "hi": b.high, "n": b.questions, "mean_d": b.mean_difficulty, "recall@10": 1 - b.miss_rate,
             "miss": b.miss_rate} for b in bins]


def calibration(results: Path, min_bin: int, max_bins: int = 10) -> dict[str, Any] | None:
    """Equal-count D bins: the headline uses the most bins up to max_bins with every bin >= min_bin; bin mean D
    vs vector's miss rate (official Recall@10); r for every other bin count allowed, as a sensitivity check."""
    if not results.is_file():
        return None
    pts = points_from_results(load(results))
    head = calibrate(pts, min_bin=min_bin, max_bins=max_bins)
    if not head.bins:
        return {"questions": len(pts), "bins": [], "note": head.note}
    allowed = {b: bins for b in range(3, min(20, len(pts) // min_bin) + 1)
               if len(bins := equal_count_bins(pts, 1.0, b)) >= 3 and all(x.questions >= min_bin for x in bins)}
    out: dict[str, Any] = {"questions": len(pts), "bins": _rows(head.bins), "bin_count": len(head.bins),
                           "r": head.r, "p": head.p}
    out["sensitivity"] = {b: dict(zip(("r", "p"), pearson(bins))) for b, bins in sorted(allowed.items())}
    by_h: dict[int, list[float]] = {}
    for p in pts:
        by_h.setdefault(p.hops, []).append(p.recall)
    out["by_hops"] = [{"h": h, "n": len(v), "miss": 1 - statistics.fmean(v)} for h, v in sorted(by_h.items())]
    kept = [b for b in out["by_hops"] if b["n"] >= min_bin]
    if len(kept) >= 3:
        r = pearsonr([b["h"] for b in kept], [b["miss"] for b in kept])
        out.update(r_hops=float(r.statistic), p_hops=float(r.pvalue))
    # diagnostic: D with a heavier weight on s (D_lambda = h - lambda s), same bin count as the headline
    out["lambda_sweep"] = {lam: pearson(equal_count_bins(pts, lam, len(head.bins)))[0]
                           for lam in (1, 2, 3, 4, 6, 8, 12, 24)}
    q = pearsonr([p.value(1.0) for p in pts], [1 - p.recall for p in pts])
    out.update(r_questions=float(q.statistic), p_questions=float(q.pvalue))
    return out


def fitted_calibration(fit_on: Path, check_on: dict[str, Path], min_bin: int) -> dict[str, Any] | None:
    """lambda fitted on the vector run of the generated set (mhgraph.eval.calibration.calibration_report, what
    `mhgraph runs calibrate` does); r at lambda 1, at the fitted lambda and by s alone, there and on every run of
    check_on. Bins are kept for the first two runs (the ones the record shows)."""
    if not fit_on.is_file():
        return None
    checks = {label: points_from_results(load(path)) for label, path in check_on.items() if path.is_file()}
    report = calibration_report(("fitted on", points_from_results(load(fit_on))), checks, min_bin=min_bin)
    out: dict[str, Any] = {"fitted_on": str(fit_on), "fit": asdict(report.fit), "similarity_weight": report.weight,
                           "r": {}}
    # diagnostic: the weight the first checked run (the real questions) would give if fitted on itself
    if checks:
        first = next(iter(checks))
        out["fitted_on_check"] = {"run": first, "similarity_weight": fit_similarity_weight(checks[first]).similarity_weight}
    if report.weight is None:
        return out
    for i, (label, by_weight) in enumerate(report.runs.items()):
        out["r"][label] = {w: asdict(cal) for w, cal in by_weight.items()}
        out["r"][label]["similarity_alone"] = {"questions": report.similarity_alone[label].questions,
                                               "r": report.similarity_alone[label].r,
                                               "p": report.similarity_alone[label].p}
        for w, cal in out["r"][label].items():
            if w != "similarity_alone" and (i > 1 or w == "1"):   # bins only where the record shows them
                cal["bins"] = len(cal["bins"])
    return out


def _last_line(path: Path) -> str:
    lines = [x for x in path.read_text(encoding="utf-8").splitlines() if x.strip()] if path.is_file() else []
    return f"`{lines[-1].strip()}`" if lines else "(no output)"


def gen_record(path: Path) -> dict[str, Any] | None:
    return load(path) if path.is_file() else None


def fmt_p(p: float | None) -> str:
    return "-" if p is None else (f"{p:.2g}" if p < 0.001 else f"{p:.3f}")


def tau_cell(t: dict[str, Any]) -> str:
    if t["tau"] is None:
        return "-"
    return f"τ = {t['tau']:.3f} (p = {fmt_p(t['p'])}, {len(t['methods'])} methods)"


def calibration_lines(title: str, cal: dict[str, Any] | None) -> list[str]:
    if cal is None:
        return [f"{title}: not run.", ""]
    if not cal["bins"]:
        return [f"{title}: {cal['questions']} questions, {cal['note']}.", ""]
    lines = [f"{title}: {cal['questions']} questions with gold evidence, {len(cal['bins'])} equal-count D bins; "
             f"**Pearson r = {f(cal.get('r'))}** (p = {fmt_p(cal.get('p'))}) between a bin's mean D and vector's "
             f"miss rate; per question r = {f(cal['r_questions'])}."
             + (f" By hop count h alone (bins of ≥ the minimum): r = {f(cal.get('r_hops'))} (p = {fmt_p(cal.get('p_hops'))}, "
                f"{len([b for b in cal['by_hops'] if b['n'] >= 50])} points)."
                if cal.get("r_hops") is not None else " By hop count alone: fewer than 3 values of h with enough "
                "questions, no r.")
             + " Pearson r for every bin count whose bins all hold enough questions (sensitivity): "
             + ", ".join(f"{b} bins {f(v['r'])}" for b, v in cal["sensitivity"].items()) + ". Diagnostic, not the "
             "MHTS D: with D = h − λ·s, the same bin count gives r = "
             + ", ".join(f"{f(v)} (λ {k})" for k, v in cal["lambda_sweep"].items()) + ".", ""]
    lines += table(["D bin", "questions", "mean D", "vector Recall@10", "miss rate"],
                   [[f"[{b['lo']:.3f}, {b['hi']:.3f})", str(b["n"]), f(b["mean_d"]), f(b["recall@10"]), f(b["miss"])]
                    for b in cal["bins"]])
    lines += ["", "By hop count h: " + "; ".join(f"h {b['h']}: {b['n']} questions, miss {f(b['miss'])}"
                                               for b in cal["by_hops"]) + ".", ""]
    return lines


def fitted_lines(fitted: dict[str, Any] | None) -> list[str]:
    if not fitted:
        return []
    fit = fitted["fit"]
    head = (f"**The similarity weight fitted on the generated set** (`mhgraph runs calibrate {fitted['fitted_on']} "
            f"--check RUN`: "
            f"the least-squares line of vector's per-question miss on h and s over the generated set's "
            f"{fit['questions']} questions gives {fit['hop_slope']:+.3f} per hop and {fit['similarity_slope']:+.3f} per "
            f"unit of s")
    if fitted.get("similarity_weight") is None:
        return [head + f"; no weight: {fit['note']}).", ""]
    w = f"{fitted['similarity_weight']:g}"
    own = (fitted.get("fitted_on_check") or {}).get("similarity_weight")
    head += f", so λ = {w}" + (f"; fitted on the {fitted['fitted_on_check']['run']} itself it would be {own:.1f}"
                               if own else "")
    lines = [head + "). The same equal-count binning as above; the other methods' rows are a "
                    "diagnostic: the one λ, fitted to vector's misses on generated questions, set against each "
                    "method's misses on the real ones:", ""]
    rows = []
    for label, by_w in fitted["r"].items():
        one, best = by_w["1"], by_w[w]
        rows.append([label, str(best["questions"]),
                     f"{f(one['r'])} ({one['bins']} bins)" if one["r"] is not None else "-",
                     f"**{f(best['r'])}** (p {fmt_p(best['p'])})" if best["r"] is not None else "-",
                     f(by_w["similarity_alone"]["r"])])
    lines += table(["run", "questions", "r at λ 1 (MHTS)", f"r at λ {w} (fitted on the generated set)",
                    "r by s alone (D = −s)"], rows)
    bins = fitted["r"].get("fitted on", {}).get(w, {}).get("bins")
    if isinstance(bins, list):
        lines += ["", f"Generated set at λ {w}:", ""]
        lines += table(["D bin", "questions", "mean D", "miss rate"],
                       [[f"[{b['low']:.2f}, {b['high']:.2f})", str(b["questions"]), f(b["mean_difficulty"]),
                         f(b["miss_rate"])] for b in bins])
    return lines + [""]


def evidence_lines(seen: dict[str, Any], taus: dict[str, Any], question_fold_fig: dict[str, Any]) -> list[str]:
    """The markdown of what the k-fold TreeHop models saw of the questions they score, and of τ with the
    question-fold runs in place of the evidence-disjoint ones."""
    if not seen:
        return []
    L = ["", "### What the k-fold TreeHop models saw of the questions they score", "",
         "A fold model never trains on the questions it scores, but it can train on other questions with the same "
         "gold chunks. Per held-out question, the share of its gold chunks that are gold chunks of a question its "
         "fold model trained on (an upper bound: a question with one fact gives no example; for the "
         "evidence-disjoint models, whose examples with a held-out gold chunk were withheld, none); the questions "
         "by that share (none, some, all seen), with TreeHop's and vector's official Hits@10 on each group (vector "
         "has no training: its column shows how hard the group is).", ""]
    rows = []
    for key, g in seen.items():
        cells = [key, str(g["questions"]), f"{g['training_examples']:.0f}", f(g["mean_share_seen"])]
        for label in ("none", "some", "all"):
            grp = g["groups"][label]
            cells.append(f"{grp['questions']}: {f(grp['treehop hits@10'])} / {f(grp['vector hits@10'])}"
                         if grp["questions"] else "0")
        rows.append(cells)
    L += table(["set, treehop run", "questions", "training examples per fold", "mean share seen", "none seen: n, treehop / vector",
                "some seen", "all seen"], rows)
    if question_fold_fig:
        q = question_fold_fig
        L += ["", "The ranking above has treehop's **evidence-disjoint** k-fold models on both sets (`mhgraph treehop "
                  "train --evidence-disjoint`). With the question-fold models instead (k-fold by question on the "
                  "generated set; pair-disjoint folds on the real questions), treehop's figures are Hits@10 "
                  f"{f(q['generated']['hits@10'])} generated / {f(q['dev']['hits@10'])} real, Recall@10 "
                  f"{f(q['generated']['recall@10'])} / {f(q['dev']['recall@10'])}, and Kendall's τ:", ""]
        rows = []
        for k, v in taus.items():
            e = v.get("with_question_fold_treehop")
            if not e:
                continue
            cells = [k, tau_cell(e["all"]), tau_cell(e["without_claims"])]
            for which in ("all", "without_claims"):
                a = e["agreement"][which]
                cells.append(f"{f(a['dev_split_half']['mean'])} ({f(a['dev_split_half']['share_ge_0.7'])}); "
                             f"{f(a['bootstrap']['mean'])} [{f(a['bootstrap']['p05'])}, {f(a['bootstrap']['p95'])}]"
                             if "dev_split_half" in a else "-")
            rows.append(cells)
            if e["all"].get("discordant") is not None:
                cells[1] += " (discordant: " + (", ".join(f"{a}–{b}" for a, b in e["all"]["discordant"]) or "none") + ")"
        L += table(["metric", "all methods", "without claims",
                    "split-half τ (share ≥ 0.7); bootstrap τ [5th, 95th], all",
                    "the same, without claims"], rows)
    return L


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--name", default="multihop-rag")
    ap.add_argument("--flat", default=None)
    ap.add_argument("--out", default="runs/bench-generate", type=Path)
    ap.add_argument("--dev", default="../shared/data/multihop-rag/MultiHopRAG.json", type=Path)
    ap.add_argument("--recorded", default="bench/results", type=Path)
    ap.add_argument("--command", default="bash bench/generate.sh")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--notes", type=Path, help="Markdown inserted after the rankings (where they disagree and why).")
    ap.add_argument("--min-bin", type=int, default=50)
    ap.add_argument("--date", help="When the runs were made (default: now).")
    args = ap.parse_args(argv)
    name, flat = args.name, args.flat or f"{args.name}-flat"
    res = args.recorded / f"generate-{name}"
    runs_gen, runs_dev = args.out / name / "runs-generated", args.out / name / "runs-dev"
    gen_file = args.out / name / "questions.json"

    gen_ids = {m: next((k for k in GEN_KFOLD.get(m, []) if (runs_gen / k / "report.json").is_file()), rid)
               for m, (rid, _) in METHODS.items()}
    gen_reports = {m: load(runs_gen / rid / "report.json") for m, rid in gen_ids.items()
                   if (runs_gen / rid / "report.json").is_file()}
    gen = {m: figures(r) for m, r in gen_reports.items()}
    packaged = runs_gen / METHODS["treehop"][0] / "report.json"
    transfer = figures(load(packaged)) if gen_ids["treehop"] != METHODS["treehop"][0] and packaged.is_file() else None
    dev = {m: dev_figures(m, runs_dev, args.recorded) for m in METHODS}
    ordinary_id = DEV_FRESH["treehop"][-1]
    ordinary = runs_dev / ordinary_id / "report.json"
    dev_kfold = figures(load(ordinary)) if ordinary.is_file() and dev["treehop"].get("run_id") != ordinary_id else None
    methods = list(METHODS)
    no_claims = [m for m in methods if m != "claims"]
    gen_pq = {m: pq for m in methods if (pq := per_question(runs_gen / gen_ids[m] / "results.json"))}
    dev_pq = {m: pq for m in methods if dev[m].get("results") and (pq := per_question(dev[m]["results"]))}
    taus = {}
    for metric in ("hits@10", "recall@10"):
        g = {m: (gen.get(m) or {}).get(metric) for m in methods}
        d = {m: dev[m].get(metric) for m in methods}
        taus[metric] = {**ranking_agreement(g, d, gen_pq, dev_pq, methods, metric),
                        "without_claims_treehop": tau(g, d, [m for m in no_claims if m != "treehop"]),
                        "ranks_generated": ranks(g), "ranks_dev": ranks(d)}
        if dev_kfold:   # the same with the ordinary k-fold treehop figure on the real questions
            d_ordinary = {**d, "treehop": dev_kfold[metric]}
            taus[metric]["with_ordinary_kfold_treehop"] = {"all": tau(g, d_ordinary, methods),
                                                           "without_claims": tau(g, d_ordinary, no_claims)}
    # when the ranking has the evidence-disjoint treehop, the same with the question-fold runs
    headline = {"generated": gen_ids["treehop"], "dev": dev["treehop"].get("run_id")}
    folds_runs = {s: runs / QUESTION_FOLDS[s] for s, runs in (("generated", runs_gen), ("dev", runs_dev))}
    question_fold_fig: dict[str, Any] = {}
    if set(headline.values()) == {EVIDENCE_DISJOINT} and all((r / "report.json").is_file() for r in folds_runs.values()):
        question_fold_fig = {s: figures(load(r / "report.json")) for s, r in folds_runs.items()}
        q_pq = {s: per_question(r / "results.json") for s, r in folds_runs.items()}
        for metric in ("hits@10", "recall@10"):
            g = {**{m: (gen.get(m) or {}).get(metric) for m in methods}, "treehop": question_fold_fig["generated"][metric]}
            d = {**{m: dev[m].get(metric) for m in methods}, "treehop": question_fold_fig["dev"][metric]}
            taus[metric]["with_question_fold_treehop"] = ranking_agreement(
                g, d, {**gen_pq, "treehop": q_pq["generated"]}, {**dev_pq, "treehop": q_pq["dev"]}, methods, metric)
    seen = {f"{s}, {rid}": g for s, runs in (("generated", runs_gen), ("development split", runs_dev))
            for rid in dict.fromkeys((*GEN_KFOLD["treehop"], *DEV_FRESH["treehop"]))
            if (g := seen_groups(runs / rid, runs / "vector-k10" / "results.json"))}
    generation = gen_record(res / "generated-generate.json")
    local = gen_record(res / "local-generate.json")
    overlaps = {"generated": overlap(gen_file) if gen_file.is_file() else None, "dev": overlap(args.dev)}
    flat_file = args.out / flat / "questions.json"
    if flat_file.is_file():
        overlaps["flat_generated"] = overlap(flat_file)
    cal = {"generated": calibration(runs_gen / "vector-k10" / "results.json", args.min_bin),
           "dev": calibration(runs_dev / "vector-k10" / "results.json", args.min_bin)}

    # the flat corpus
    flat_runs = {s: args.out / flat / f"runs-{s}" for s in ("generated", "dev")}
    flat_fig: dict[str, dict[str, dict[str, Any]]] = {}
    for s, d in flat_runs.items():
        for m, (rid, _) in METHODS.items():
            if m == "treehop":   # k-fold on this corpus, as in section 1: never the packaged model, trained on dev
                rid = EVIDENCE_DISJOINT
            if (d / rid / "report.json").is_file():
                flat_fig.setdefault(m, {})[s] = figures(load(d / rid / "report.json"))
    flat_taus = {}
    for metric in ("hits@10", "recall@10"):
        flat_taus[metric] = tau({m: v.get("generated", {}).get(metric) for m, v in flat_fig.items()},
                                {m: v.get("dev", {}).get(metric) for m, v in flat_fig.items()}, list(flat_fig))
    flat_generation = gen_record(res / "flat-generated-generate.json")
    cal["flat_generated"] = calibration(flat_runs["generated"] / "vector-k10" / "results.json", args.min_bin)
    cal["flat_dev"] = calibration(flat_runs["dev"] / "vector-k10" / "results.json", args.min_bin)
    # the similarity weight a user would fit on the generated set (`mhgraph runs calibrate`), checked on the real
    # questions; and, as a diagnostic, how that D orders the other methods' misses on the real questions
    cal["fitted"] = fitted_calibration(
        runs_gen / "vector-k10" / "results.json",
        {"development split": runs_dev / "vector-k10" / "results.json",
         **{f"development split, {m}": r for m, v in dev.items() if m != "vector" and (r := v.get("results"))}},
        args.min_bin)
    cal["flat_fitted"] = fitted_calibration(flat_runs["generated"] / "vector-k10" / "results.json",
                                            {"development split on the flat corpus":
                                             flat_runs["dev"] / "vector-k10" / "results.json"}, args.min_bin)

    info = machine()
    date = args.date or dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%MZ")
    any_report = next(iter(gen_reports.values()), {})
    th = dict(gen_reports.get("treehop", {}).get("params", {}))
    if th.get("treehop_model"):
        th["treehop_model"] = th["treehop_model"].replace(str(Path.cwd()) + "/", "")
    th_kfold = gen_ids["treehop"] != METHODS["treehop"][0]
    evidence_disjoint = gen_ids["treehop"] == EVIDENCE_DISJOINT    # on the generated set
    both_evidence_disjoint = evidence_disjoint and dev["treehop"].get("run_id") == EVIDENCE_DISJOINT
    dev_th = dev["treehop"].get("report") or {}
    out: dict[str, Any] = {
        "what": "mhgraph generate measured (issue 25): method rankings on generated vs real questions, "
                "difficulty calibration, the flat corpus, cost",
        "date": date, "machine": describe(info), "versions": versions(), "command": args.command,
        "corpus": name, "generated_questions": str(gen_file), "dev_questions": DEV_LABEL,
        "embedding_model": any_report.get("embedding_model"),
        "treehop_model_generated": th.get("treehop_model"),
        "treehop_model_dev": (dev_th.get("params") or {}).get("treehop_model"),
        "treehop_generated_kfold": th_kfold,
        "treehop_packaged_on_generated": transfer,
        "treehop_ordinary_kfold_on_dev": dev_kfold,
        "generated_sharing_a_hop": shared_hops(gen_file) if gen_file.is_file() else None,
        "treehop_question_folds": question_fold_fig or None, "treehop_evidence_seen": seen,
        "methods": {m: {"args": a, "run_id": gen_ids[m], "generated": gen.get(m),
                        "dev": {k: v for k, v in dev[m].items() if k != "report"}}
                    for m, (_, a) in METHODS.items()},
        "kendall": taus, "lexical_overlap": overlaps, "calibration": cal,
        "generation": generation, "local_generation": local,
        "flat": {"corpus": flat, "generation": flat_generation, "figures": flat_fig, "kendall": flat_taus},
    }
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, default=str) + "\n", encoding="utf-8")

    L: list[str] = [f"# Generated questions against the real ones on {name} (issue 25)", ""]
    g_sum = (generation or {}).get("summary") or {}
    L += [f"- generated: {g_sum.get('questions', '-')} questions from corpus `{name}`'s claim layer, **offline "
          f"templates** (`--llm-backend none`, seed 0; no language model wrote them) ({gen_file}, not committed: "
          "the same corpus, seed and settings give the same file)",
          f"- real: {DEV_LABEL} ({args.dev}); 1,804 scored by the official rule (null questions have no evidence); "
          "ircot and decompose leave out their 3 demonstration questions",
          f"- date (UTC): {date}; machine: {describe(info)}, CPU only, shared with other work (timings are "
          f"indicative); Python {out['versions']['python']}, torch {out['versions']['torch']}, "
          f"sentence-transformers {out['versions']['sentence-transformers']}",
          f"- command: `{args.command}`",
          f"- models: embeddings {out['embedding_model']}; treehop on the generated set: "
          f"**{out['treehop_model_generated'] or '-'}** "
          + ("(in-domain, k-fold over the generated set, evidence-disjoint: each generated question scored by a fold "
             "model that never trained on it nor on any example with one of its gold chunks, as a user without "
             "questions of their own would train it)" if evidence_disjoint else
             "(in-domain, k-fold by question over the generated set: each generated question scored by the fold "
             "model that never saw it, as a user without questions of their own would train it)"
             if th_kfold else "(the packaged UpdateGate, trained on the development split's questions over this "
             "corpus, never on the generated questions)")
          + "; treehop on the development "
          f"split: **{out['treehop_model_dev'] or '-'}** (in-domain, k-fold: each question scored by the fold "
          "model that never saw it" + (" nor any example with one of its gold chunks"
                                       if dev["treehop"].get("run_id") == EVIDENCE_DISJOINT else "") + "); ircot, decompose: the **offline strategies** (no language model); claims: "
          "the **offline claim layer** (spaCy, no language model); metarag: the rules filter extractor, no "
          "reranking. None of these are a language model's figures.", ""]
    L += ["## 1. Rankings: generated set vs development split", "",
          "Official rule (MultiHop-RAG's retrieval_evaluate.py), Hits@10 and Recall@10 over the questions with "
          "evidence; rank 1 = best. Each method with the arguments of its recorded development-split run.", ""]
    rows = []
    for m in methods:
        g, d = gen.get(m) or {}, dev[m]
        args_cell = f"`{METHODS[m][1]}`" + ((" (evidence-disjoint k-fold models on both sets)" if both_evidence_disjoint
                                             else " (k-fold models on both sets)") if m == "treehop" and th_kfold else "")
        rows.append([LABEL.get(m, m), args_cell,
                     f(g.get("hits@10")), str(taus["hits@10"]["ranks_generated"].get(m, "-")),
                     f(d.get("hits@10")), str(taus["hits@10"]["ranks_dev"].get(m, "-")),
                     f(g.get("recall@10")), str(taus["recall@10"]["ranks_generated"].get(m, "-")),
                     f(d.get("recall@10")) + ("*" if d.get("recall_rule") else ""),
                     str(taus["recall@10"]["ranks_dev"].get(m, "-"))])
    L += table(["method", "arguments", "Hits@10 generated", "rank", "Hits@10 dev", "rank",
                "Recall@10 generated", "rank", "Recall@10 dev", "rank"], rows)
    if any(dev[m].get("recall_rule") for m in methods):
        L += ["", "\\* our rule's Recall@10 (the official one was not recorded for that run); on this split the two "
                  "rules' Recall@10 differ by less than 0.01 for every other method."]
    L += ["", "Kendall's τ (τ-b, two-sided p) between the two columns:", ""]
    L += table(["metric", "all methods", "without claims", "without claims and treehop (diagnostic)"],
               [[k, tau_cell(v["all"]), tau_cell(v["without_claims"]), tau_cell(v["without_claims_treehop"])]
                for k, v in taus.items()])
    if transfer:
        L += ["", f"treehop with the packaged model (trained on the development split's questions) on the generated "
                  f"set, for the transfer to questions of another wording: Hits@10 {f(transfer['hits@10'])}, "
                  f"Recall@10 {f(transfer['recall@10'])} (not in the ranking: the k-fold figure is)."]
    if dev_kfold:
        L += ["", f"treehop on the development split with the ordinary k-fold models (a held-out question's hops can "
                  f"be training examples of other questions that share its articles): Hits@10 "
                  f"{f(dev_kfold['hits@10'])}, Recall@10 {f(dev_kfold['recall@10'])} (not in the ranking: the "
                  "pair-disjoint figure is: of the generated questions, "
                  f"{out['generated_sharing_a_hop']['sharing']} of {out['generated_sharing_a_hop']['questions']} "
                  "share a hop with another question, so their k-fold models saw almost no hop of the questions "
                  "they score; bench/results/treehop-multihop-rag.md counts 636 of 653 real inference questions "
                  "whose hop another question has). With "
                  "it in the ranking instead, τ would be: "
                  + "; ".join(f"{k} {tau_cell(v['with_ordinary_kfold_treehop']['all'])}, without claims "
                              f"{tau_cell(v['with_ordinary_kfold_treehop']['without_claims'])}" for k, v in taus.items())
                  + "."]
    L += ["", f"How far τ can be trusted ({ROUNDS} rounds each; mean [5th, 95th percentile], and the share of "
              "rounds with τ ≥ 0.7). Split-half: the development split's questions cut at random into two halves, "
              "τ between the halves: how well the real questions agree with themselves, the ceiling a generated "
              "set can reach. Bootstrap: both sets' questions resampled, τ between generated and real: the "
              "interval of the measured τ. Fresh per-question runs only (methods without one are left out).", ""]
    rows = []
    for k, v in taus.items():
        for which, a in v["agreement"].items():
            if "dev_split_half" in a:
                sh, bs = a["dev_split_half"], a["bootstrap"]
                rows.append([k, which.replace("_", " "), str(len(a["methods"])),
                             f"{f(sh['mean'])} [{f(sh['p05'])}, {f(sh['p95'])}]", f(sh["share_ge_0.7"]),
                             f"{f(bs['mean'])} [{f(bs['p05'])}, {f(bs['p95'])}]", f(bs["share_ge_0.7"])])
    L += table(["metric", "methods", "n", "split-half τ (dev vs dev)", "share ≥ 0.7",
                "bootstrap τ (generated vs dev)", "share ≥ 0.7"], rows) if rows else ["(no per-question runs)"]
    L += [""]
    for k, v in taus.items():
        t = v["all"]
        if t.get("left_out"):
            L.append(f"- {k}: left out (no figure on one side): {', '.join(t['left_out'])}")
        if t.get("discordant") is not None:
            L.append(f"- {k}, discordant pairs (ordered one way on the generated set, the other on the development "
                     f"split): " + (", ".join(f"{a}–{b}" for a, b in t["discordant"]) or "none"))
    L += evidence_lines(seen, taus, question_fold_fig)
    L += ["", "Where the development figures come from:", ""]
    L += [f"- {m}: {dev[m]['source']}" for m in methods]
    L += [""]
    if args.notes and args.notes.is_file():
        L += [args.notes.read_text(encoding="utf-8").rstrip(), ""]
    L += ["### By question type (official Hits@10)", ""]
    types = sorted({t for r in gen_reports.values() for t in ((r.get("official") or {}).get("by_type") or {})})
    rows = []
    for m in methods:
        gr = ((gen_reports.get(m) or {}).get("official") or {}).get("by_type") or {}
        rep = dev[m].get("report") or load(args.recorded / DEV_BY_TYPE[m])
        dr = (rep.get("official") or {}).get("by_type") or {}
        rows.append([m] + [f"{f((gr.get(t) or {}).get('hits@10'))} / {f((dr.get(t) or {}).get('hits@10'))}"
                           for t in types])
    L += table(["method (generated / dev)"] + types, rows)
    L += ["", "(dev: the fresh run where there is one, else the recorded summary "
              "bench/results/" + "; ".join(f"{m}: {DEV_BY_TYPE[m]}" for m in methods if not dev[m].get("report"))
              + ")"]
    L += ["", "### Lexical overlap (share of a question's content words found in its evidence facts)", ""]
    rows = []
    for s, o in overlaps.items():
        if o:
            for t, v in o.items():
                rows.append([s, t, str(v["n"]), f(v["mean"]), f(v["median"]), f(v["share_ge_0.8"])])
    L += table(["question set", "type", "questions", "mean", "median", "share ≥ 0.8"], rows)
    L += ["", "## 2. Difficulty calibration (vector -k 10, official Recall@10)", "",
          f"D = h − s (h evidence facts, s mean cosine of the question with its gold chunks, all-MiniLM-L6-v2), "
          f"computed by eval for each question set with its own questions; equal-count bins of at least "
          f"{args.min_bin} questions. MHTS reports r = 0.99 for its win rate, 0.93 for hop count alone.", ""]
    L += calibration_lines("Generated set", cal["generated"])
    L += calibration_lines("Development split", cal["dev"])
    L += fitted_lines(cal["fitted"])
    L += ["## 3. Without metadata: the flat corpus", ""]
    fs = (flat_generation or {}).get("summary") or {}
    if flat_generation:
        L += [f"Corpus `{flat}` (corpus.txt: titles and text only: no sources or dates). Generated offline: "
              f"{fs.get('questions')} questions in {flat_generation['wall_seconds']:.0f} s "
              f"(`{flat_generation['command']}`); by type: "
              + ", ".join(f"{t} {v['written']} of {v['asked']}" for t, v in (fs.get("by_type") or {}).items())
              + ". Notes: " + ("; ".join(fs.get("notes") or []) or "none") + ".", ""]
    else:
        L += ["Not run.", ""]
    if flat_fig:
        L += table(["method", "Hits@10 generated-flat", "Hits@10 dev on flat", "Recall@10 generated-flat",
                    "Recall@10 dev on flat"],
                   [[m, f(v.get("generated", {}).get("hits@10")), f(v.get("dev", {}).get("hits@10")),
                     f(v.get("generated", {}).get("recall@10")), f(v.get("dev", {}).get("recall@10"))]
                    for m, v in flat_fig.items()])
        L += ["", f"Kendall's τ on the flat corpus: Hits@10 {tau_cell(flat_taus['hits@10'])}; Recall@10 "
                  f"{tau_cell(flat_taus['recall@10'])}.", ""]
        L += calibration_lines("Generated-flat set", cal["flat_generated"])
        L += calibration_lines("Development split on the flat corpus", cal["flat_dev"])
        L += fitted_lines(cal["flat_fitted"])
    elif flat_generation:
        L += [("No method ran on the flat corpus with this record: the generation line above is the one its record "
               f"file (bench/results/generate-{name}/flat-generated-generate.json) holds from an earlier run."), ""]
    L += ["## 4. Cost", ""]
    if generation:
        s = generation.get("summary") or {}
        L += [f"- offline, {s.get('questions')} questions from the built claim layer of `{name}`: "
              f"**{generation['wall_seconds']:.0f} s wall** (`{generation['command']}`, the CLI's start and model "
              f"loading included; the generator's own time {(s.get('seconds') or {}).get('total')} s); "
              f"by type: " + ", ".join(f"{t} {v['written']} of {v['asked']}" for t, v in (s.get("by_type") or {}).items())
              + f"; facts verbatim {s.get('checks', {}).get('facts_verbatim')} of {s.get('checks', {}).get('facts')}"
              + "; notes: " + ("; ".join(s.get("notes") or []) or "none")]
    if local:
        s = local.get("summary") or {}
        nq = s.get("questions") or 0
        L += [f"- local model: `{local['command']}`: rc {local['rc']}, {local['wall_seconds']:.0f} s wall, "
              + (f"{nq} questions, **{local['wall_seconds'] / nq:.0f} s per question** ({s.get('strategy')})"
                 if nq else "no questions written: " + _last_line(res / "local-generate.txt"))]
    else:
        L += ["- local model: not run"]
    L += ["", f"Per-run summaries: bench/results/generate-{name}/ (generated/, dev/, flat-generated/, flat-dev/; "
              "the generation records *-generate.json); machine-readable: "
              f"bench/results/generate-{name}.json.", ""]
    sys.stdout.write("\n".join(L))
    return 0


if __name__ == "__main__":
    sys.exit(main())

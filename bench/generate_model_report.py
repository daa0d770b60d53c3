"""The record of bench/generate.sh's `harvest` and `model` steps (issue 25): questions written by a language
model (bench/llm_replay.py replaying replies a GPU computed with bench/gpu_replies.py), against the real ones.

    python bench/generate_model_report.py --name multihop-rag --out runs/bench-generate --device FILE \
        --json bench/results/generate-model-NAME.json [--notes FILE] > bench/results/generate-model-NAME.md

Reads the eight methods' runs on the model-written set (OUT/NAME/model/runs/ID/report.json), the development
split's figures and the offline (template) set's as recorded in bench/results/generate-NAME.json (made by
bench/generate_report.py), the generation record (bench/results/generate-NAME/model-generate.json), the
answerability of the kept questions (model-answerable.json) and the device's log (--device: a JSON record of
bench/gpu_replies.py's run). Kendall's tau, lexical overlap and the calibration are computed as in
bench/generate_report.py, with its functions.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from environment import describe, machine, versions
from generate_report import (
    DEV_LABEL,
    LABEL,
    METHODS,
    QUESTION_FOLDS,
    calibration,
    calibration_lines,
    figures,
    fmt_p,
    load,
    overlap,
    ranks,
    tau,
    tau_cell,
)
from markdown import f, table

SETS = ("without claims", "without claims and treehop (diagnostic)")


def taus(gen: dict[str, dict[str, Any]], dev: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for metric in ("hits@10", "recall@10"):
        g = {m: gen[m].get(metric) for m in gen}
        d = {m: dev[m].get(metric) for m in dev}
        methods = list(METHODS)
        out[metric] = {"all methods": tau(g, d, methods),
                       SETS[0]: tau(g, d, [m for m in methods if m != "claims"]),
                       SETS[1]: tau(g, d, [m for m in methods if m not in ("claims", "treehop")])}
    return out


def replay_record(model_dir: Path) -> dict[str, Any]:
    """The requests the replaying endpoint did not find among the device's replies, by kind, and how many
    of them the harvest never recorded."""
    from llm_replay import key, write_kind

    from mhgraph.generate.writers import COMPOSE_SYSTEM, WRITE_SYSTEM

    def rows(path: Path) -> list[list[dict[str, str]]]:
        return [json.loads(x)["messages"] for x in path.read_text().splitlines() if x.strip()] if path.is_file() else []

    harvested = {key(m) for m in rows(model_dir / "requests.jsonl")}
    kinds: Counter = Counter()
    outside = 0
    for messages in rows(model_dir / "unanswered.jsonl"):
        system = messages[0]["content"]
        kinds["a JSON retry" if len(messages) > 2 else f"write {write_kind(messages[-1]['content'])}"
              if system == WRITE_SYSTEM else "MHTS compose" if system == COMPOSE_SYSTEM else "MHTS follow-up or check"] += 1
        if system in (WRITE_SYSTEM, COMPOSE_SYSTEM) and len(messages) == 2 and key(messages) not in harvested:
            outside += 1
    return {"unanswered": dict(sorted(kinds.items())), "outside_harvest": outside}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--name", default="multihop-rag")
    ap.add_argument("--out", default="runs/bench-generate", type=Path)
    ap.add_argument("--recorded", default="bench/results", type=Path)
    ap.add_argument("--device", type=Path, required=True, help="JSON record of the GPU run (bench/gpu_replies.py)")
    ap.add_argument("--command", default="bash bench/generate.sh multihop-rag harvest model")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--notes", type=Path)
    ap.add_argument("--min-bin", type=int, default=50)
    args = ap.parse_args(argv)
    name, model_dir = args.name, args.out / args.name / "model"
    base = load(args.recorded / f"generate-{name}.json")
    summaries = args.recorded / f"generate-{name}"
    record = load(summaries / "model-generate.json")
    harvest = load(summaries / "model-harvest-generate.json")
    answerable = load(summaries / "model-answerable.json")
    device = load(args.device)
    questions = model_dir / "questions.json"

    model: dict[str, dict[str, Any]] = {}
    for m, (rid, _) in METHODS.items():
        report = model_dir / "runs" / rid / "report.json"
        model[m] = figures(load(report)) if report.is_file() else {"hits@10": None, "recall@10": None, "n": None}
    dev = {m: base["methods"][m]["dev"] for m in METHODS}
    # beside the packaged model's column: the question-fold figure on the real questions, as when this report was
    # first recorded (the base record ranks the evidence-disjoint one when it has it)
    if (base.get("treehop_question_folds") or {}).get("dev"):
        dev["treehop"] = {**base["treehop_question_folds"]["dev"], "run_id": QUESTION_FOLDS["dev"]}
    offline = {m: base["methods"][m]["generated"] for m in METHODS}
    # the template set's treehop column with the packaged model, the one that scores the model-written set
    offline["treehop"] = base["treehop_packaged_on_generated"]
    missing = [m for m in METHODS if model[m]["hits@10"] is None]
    kendall = taus(model, dev)
    lexical = overlap(questions)
    cal = calibration(model_dir / "runs" / METHODS["vector"][0] / "results.json", args.min_bin)
    summary = record["summary"] or {}
    kept = len(load(questions))

    lines = [f"# Model-written questions against the real ones on {name} (issue 25)", "",
             (f"- generated: {kept} questions from corpus `{name}`'s claim layer, written by **{device['model']}** "
             f"({device['runtime']}), seed 0 ({questions}, not committed)"),
             f"- real: {DEV_LABEL}; figures as recorded in bench/results/generate-{name}.json (official rule)",
             (f"- date (UTC): {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%MZ}; {describe(machine())} (generation, "
             f"replay and eval); the model ran on {device['device']}"),
             f"- command: `{args.command}` (device step: `{device['command']}`)",
             "- methods: treehop with the packaged model (trained on the development split's questions, never on "
             "these); ircot, decompose and claims as their offline strategies; metarag with the rules filter. The "
             "development figures are those of bench/results/generate-" + name + ".md (treehop: "
             + (base["methods"]["treehop"]["dev"].get("run_id") or "the recorded run") + ").", ""]
    if args.notes and args.notes.is_file():
        lines += [args.notes.read_text(encoding="utf-8").rstrip(), ""]
    lines += ["## 1. Rankings: model-written set vs development split (and the template set)", ""]
    if missing:
        lines += [f"**Not run on the model-written set: {', '.join(missing)}**; τ below is over the others.", ""]
    for metric in ("hits@10", "recall@10"):
        mr, dr, orank = (ranks({m: s[m].get(metric) for m in METHODS}) for s in (model, dev, offline))
        lines += [f"Official {metric.replace('hits', 'Hits').replace('recall', 'Recall')}:", ""]
        lines += table(["method", "model-written", "rank", "development split", "rank", "templates (offline)",
                        "rank"],
                       [[LABEL.get(m, m), f(model[m].get(metric)), str(mr.get(m, "-")), f(dev[m].get(metric)),
                         str(dr.get(m, "-")), f(offline[m].get(metric)), str(orank.get(m, "-"))] for m in METHODS])
        lines.append("")
    lines += [("Kendall's τ (τ-b, two-sided p), model-written vs development split; the template set's τ from "
              f"bench/results/generate-{name}.md beside it:"), ""]
    rows = []
    for metric in ("hits@10", "recall@10"):
        for label, t in kendall[metric].items():
            old = base["kendall"][metric].get({"all methods": "all", SETS[0]: "without_claims",
                                               SETS[1]: "without_claims_treehop"}[label]) or {}
            rows.append([metric, label, tau_cell(t),
                         f"τ = {f(old.get('tau'))}" if old.get("tau") is not None else "-",
                         ", ".join(f"{a}–{b}" for a, b in t.get("discordant", [])) or "none"])
    lines += table(["metric", "methods", "model-written", "templates", "discordant pairs (model-written)"], rows)
    lines += ["", "## 2. The questions", ""]
    by_type = summary.get("by_type") or {}
    checks = summary.get("checks") or {}
    rejected = checks.get("rejected") or {}
    lines += [f"- written: {kept} questions, {sum(rejected.values())} candidates rejected; by type (written of asked): "
              + ", ".join(f"{t} {v['written']} of {v['asked']}" for t, v in by_type.items())
              + "; by construction: " + ", ".join(f"{k} {v}" for k, v in (summary.get("by_construction") or {}).items()),
              "- hops: " + ", ".join(f"{h}: {n}" for h, n in (summary.get("hops") or {}).items()),
              "- rejected, by reason: " + ", ".join(f"{k} {v}" for k, v in rejected.items()),
              (f"- facts verbatim: {checks.get('facts_verbatim')} of {checks.get('facts')}; questions containing their "
              f"answer: {checks.get('questions_containing_answer')}; near-duplicates removed: "
              f"{checks.get('near_duplicates_removed')}"),
              "- notes: " + "; ".join(summary.get("notes") or ["none"]),
              f"- answerability (each kept question whose check was answered, by the same model from its own facts, official rule): "
              f"{answerable['right']} of {answerable['asked']} right ({f(answerable['share'])}); by type "
              + ", ".join(f"{t} {c.get('right', 0)}/{c.get('asked', 0)}" for t, c in answerable["by_type"].items())
              + (f"; {answerable['not_asked']} not asked: "
                 + ", ".join(f"{t} {c['not_asked']}" for t, c in answerable["by_type"].items() if c.get("not_asked"))
                 + " (an MHTS question's facts are the pieces its decomposition mapped, which the device could not "
                 "know)" if answerable.get("not_asked") else ""), ""]
    replay = replay_record(model_dir)
    lines += ["What the replay could not answer (requests outside the device's replies get empty fields, which the "
              "generator rejects as an empty question or too few mapped pieces, and the per-type notes above then "
              "say 'the corpus allows no more'; read them as 'the candidates the device answered allow no more'): "
              + ", ".join(f"{k} {v}" for k, v in replay["unanswered"].items()) + f" ({replay['outside_harvest']} of "
              "them were never asked in the harvest: a request the harvest did not see means the two runs worded a "
              "candidate differently).", ""]
    lines += ["Lexical overlap (share of a question's content words found in its evidence facts):", ""]
    lex_rows = [["model-written", t, str(v["n"]), f(v["mean"]), f(v["median"])] for t, v in lexical.items()]
    for set_name in ("generated", "dev"):
        for t, v in base["lexical_overlap"][set_name].items():
            if t == "all":
                lex_rows.append(["templates" if set_name == "generated" else "development split", t, str(v["n"]),
                                 f(v["mean"]), f(v["median"])])
    lines += table(["question set", "type", "questions", "mean", "median"], lex_rows)
    lines += ["", "## 3. Difficulty calibration (vector -k 10, official Recall@10)", ""]
    lines += calibration_lines("Model-written set", cal)
    dev_cal = base["calibration"]["dev"]
    lines += [f"Development split, as recorded: r = {f(dev_cal.get('r'))} (p = {fmt_p(dev_cal.get('p'))}).", ""]
    lines += ["## 4. Cost", "",
              (f"- harvest (every candidate's first request recorded, nothing written): {harvest['wall_seconds']:.0f} s "
              f"here; {device['jobs']} jobs sent to the device"),
              f"- device: {device['device']}; model loaded in {device['load_seconds']:.0f} s; "
              + "; ".join(f"level {lv['level']}: {lv['requests']} requests in {lv['seconds']:.0f} s"
                          for lv in device["levels"])
              + f"; {device['requests']} requests in all, {device['generate_seconds']:.0f} s of generation, "
              f"{device['generate_seconds'] / max(kept, 1):.2f} s of GPU time per kept question",
              f"- replay (the generator run against the replies): {record['wall_seconds']:.0f} s here", ""]
    data = {"what": "issue 25: model-written questions vs the development split", "name": name,
            "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="minutes"), "machine": machine(),
            "versions": versions(), "command": args.command, "device": device, "questions": kept,
            "methods": {m: {"model_written": model[m], "dev": {k: dev[m].get(k) for k in ("hits@10", "recall@10", "n")},
                            "templates": offline[m]} for m in METHODS},
            "kendall": kendall, "lexical_overlap": lexical, "calibration": cal, "answerable": answerable,
            "generation": record, "harvest": harvest, "replay": replay}
    if args.json:
        args.json.write_text(json.dumps(data, indent=1, default=str) + "\n")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

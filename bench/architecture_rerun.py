"""Architecture rerun (issue 24): the same evaluation runs made with the code before the method-registry
refactor (old) and after it (new), on one graph, compared question by question and with the recorded figures.

For each run NAME it reads OLD/NAME/{results,report}.json and NEW/NAME/{results,report}.json and checks, per
question: the same question ids in the same order, the same hops with the same chunk ids in the same order,
scores equal within 1e-6 and the same gold flags ("retrieval identical"); then every other field of the
question's record, timing excepted (`seconds`, `phases`, `latency_s`), as a record diff whose paths are generalised
(`hops[*].query`) so that each kind of difference is counted and explained once. Then the report.json
figures (official Hits@10, Hits@4, MAP@10, MRR@10, Recall@10; our rule's Hits@10 and hop F1) of old, new and
the recorded run in bench/results/ (same to 4 decimals, or not).

    python bench/architecture_rerun.py --old /work/rr-out/old --new /work/rr-out/new --recorded bench/results \
        --old-code /work/rr-old --new-code /work/rr-new \
        --not-run "claims-offline-k8=claim layer not built in the time given" \
        --json bench/results/architecture-rerun-multihop-rag.json --markdown TABLES.md

How the runs were made (2026-11-25, 17:35-18:35 UTC; old = 2747f74, the last commit before the method
registry; new = 381ddda, main's HEAD when the runs started; each a detached git worktree; one Neo4j server
for both, on its own ports; the corpus ingested once with the new code; the graph held that corpus only):

    export MHGRAPH_HOME=/work/rr-neo4j MHGRAPH_BOLT_PORT=17987 MHGRAPH_HTTP_PORT=17774 \
        MHGRAPH_CACHE_DIR=/work/rr-cache MHGRAPH_CONFIG=tests/no-config.toml MHGRAPH_LLM_BACKEND=none
    git worktree add --detach /work/rr-old 2747f74; git worktree add --detach /work/rr-new 381ddda
    mh_old() { (cd /work/rr-old && PYTHONPATH=/work/rr-old python -m mhgraph.cli "$@"); }
    mh_new() { (cd /work/rr-new && PYTHONPATH=/work/rr-new python -m mhgraph.cli "$@"); }
    mh_new neo4j start
    mh_new ingest ../shared/data/multihop-rag/corpus.json --no-progress        # corpus 'multihop-rag'
    COMMON="--no-trace --no-progress --corpus multihop-rag --questions ../shared/data/multihop-rag/MultiHopRAG.json"
    OLD_ENV mh_old eval OLD_ARGS $COMMON --runs-dir /work/rr-out/old --run-id NAME
    mh_new eval NEW_ARGS $COMMON --runs-dir /work/rr-out/new --run-id NAME
    mh_new neo4j stop

with NAME, OLD_ARGS, NEW_ARGS and OLD_ENV as in RUNS below (old and new ran side by side, one run each at a
time). claims-offline-k8 was not run: its claim layer (`mh_new claims build --corpus multihop-rag
--llm-backend none --no-progress`, ~20 minutes alone) was not built in the time given on the shared machine.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

# name -> (old args, new args, old env, recorded summary under bench/results/ or None)
RUNS: dict[str, tuple[str, str, str, str | None]] = {
    "vector-k10": ("--method vector -k 10", "--method vector -k 10", "",
                   "baselines-multihop-rag/vector-k10.json"),
    "bm25-k10": ("--method bm25 -k 10", "--method bm25 -k 10", "", "baselines-multihop-rag/bm25-k10.json"),
    "hybrid-k10": ("--method hybrid -k 10", "--method hybrid -k 10 --hybrid-ranker naive", "",
                   "baselines-multihop-rag/hybrid-k10.json"),
    "hybrid-linear-k10": ("--method hybrid -k 10", "--method hybrid -k 10", "MHGRAPH_HYBRID_RANKER=linear",
                          "baselines-multihop-rag/hybrid-linear-k10.json"),
    "metarag-rules-k10": ("--method metarag --filter-extractor rules -k 10 --no-rerank",) * 2 + (
        "", "metarag-multihop-rag/metarag-rules-k10.json"),
    "metarag-rules-hybrid-k10": (("--method metarag --filter-extractor rules -k 10 --no-rerank "
                                 "--metarag-search hybrid"),) * 2 + (
        "", "metarag-multihop-rag/metarag-rules-hybrid-k10.json"),
    # the packaged model: bench/results/treehop-multihop-rag/ holds in-domain k-fold runs, not comparable
    "treehop-packaged-k5-h2-inference": ("--method treehop -k 5 --hops 2 --types inference_query",) * 2 + ("", None),
    "treehop-packaged-k5-h2-all": ("--method treehop -k 5 --hops 2",) * 2 + ("", None),
    "ircot-offline-k5": ("--method ircot -k 5 --llm-backend none",) * 2 + (
        "", "reasoning-multihop-rag/ircot-offline-k5.json"),
    "ircot-offline-k10": ("--method ircot -k 10 --llm-backend none",) * 2 + (
        "", "reasoning-multihop-rag/ircot-offline-k10.json"),
    "decompose-offline-n3-k5": ("--method decompose --sub-questions 3 -k 5 --llm-backend none",) * 2 + (
        "", "reasoning-multihop-rag/decompose-offline-n3-k5.json"),
    "claims-offline-k8": ("--method claims -k 8 --llm-backend none",) * 2 + (
        "", "claims-multihop-rag/claims-offline-k8.json"),
}

TIMING_KEYS = {"seconds", "phases", "latency_s"}  # timing: not a difference
TOL = 1e-6
OFFICIAL = ("hits@10", "hits@4", "map@10", "mrr@10", "recall@10")


def _path(parts: list[str]) -> str:
    return ".".join(parts).replace(".[", "[")


def diff(a: Any, b: Any, parts: list[str], out: dict[str, tuple[Any, Any]]) -> None:
    """Generalised path -> (old, new) of the first example, for every difference between a and b
    (lists index as [*]; numbers equal within TOL)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            if k in TIMING_KEYS:
                continue
            if k not in a:
                out.setdefault(_path(parts + [f"+{k}"]), (None, b[k]))
            elif k not in b:
                out.setdefault(_path(parts + [f"-{k}"]), (a[k], None))
            else:
                diff(a[k], b[k], parts + [str(k)], out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.setdefault(_path(parts + ["len"]), (len(a), len(b)))
        for x, y in zip(a, b):
            diff(x, y, parts + ["[*]"], out)
    elif isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) \
            and not isinstance(b, bool):
        if abs(a - b) > TOL:
            out.setdefault(_path(parts), (a, b))
    elif a != b:
        out.setdefault(_path(parts), (a, b))


def retrieval(q: dict[str, Any]) -> list[list[tuple[str, float, bool]]]:
    return [[(c["chunk_id"], c["score"], c["gold"]) for c in h["chunks"]] for h in q["hops"]]


def same_retrieval(a: dict[str, Any], b: dict[str, Any]) -> str | None:
    """None when the hops hold the same chunks in the same order with the same scores and gold flags,
    else what differs first."""
    ra, rb = retrieval(a), retrieval(b)
    if len(ra) != len(rb):
        return f"hops {len(ra)} vs {len(rb)}"
    for i, (ha, hb) in enumerate(zip(ra, rb), 1):
        if [c for c, _, _ in ha] != [c for c, _, _ in hb]:
            return f"hop {i}: chunk ids or order"
        if [g for _, _, g in ha] != [g for _, _, g in hb]:
            return f"hop {i}: gold flags"
        if any(s is None or t is None or abs(s - t) > TOL for (_, s, _), (_, t, _) in zip(ha, hb)
               if not (s is None and t is None)):
            return f"hop {i}: scores"
    return None


def figures(report: dict[str, Any]) -> dict[str, float | None]:
    off = report.get("official", {}).get("overall", {})
    ours = report.get("overall", {})
    fig: dict[str, float | None] = {f"official {m}": off.get(m) for m in OFFICIAL}
    fig["ours hits@10"] = ours.get("ranking", {}).get("hits@10")
    for h in ours.get("hops", []):
        fig[f"ours hop {h['hop']} F1"] = h.get("f1")
    fig["questions"] = report.get("questions")
    fig["scored"] = (report.get("official") or {}).get("questions")
    return fig


def _load(path: Path, code: str | None) -> Any:
    """A JSON file, with the code's checkout path (in packaged models' names) written as <code>."""
    text = path.read_text(encoding="utf-8")
    return json.loads(text.replace(code.rstrip("/"), "<code>") if code else text)


def compare_run(name: str, old_dir: Path, new_dir: Path, recorded_dir: Path, old_code: str | None = None,
                new_code: str | None = None) -> dict[str, Any]:
    old_args, new_args, old_env, recorded = RUNS.get(name, ("?", "?", "", None))
    out: dict[str, Any] = {"run": name, "old_args": old_args, "new_args": new_args, "old_env": old_env,
                           "recorded": f"bench/results/{recorded}" if recorded else None}
    paths = {side: d / name for side, d in (("old", old_dir), ("new", new_dir))}
    if not all((p / "results.json").is_file() for p in paths.values()):
        out["status"] = "not run: " + ", ".join(s for s, p in paths.items() if not (p / "results.json").is_file())
        return out
    code = {"old": old_code, "new": new_code}
    old = _load(paths["old"] / "results.json", old_code)
    new = _load(paths["new"] / "results.json", new_code)
    out["ids_identical"] = [q["id"] for q in old] == [q["id"] for q in new]
    by_new = {q["id"]: q for q in new}
    retrieval_diff: dict[str, str] = {}
    record_diff_questions: dict[str, list[str]] = {}   # generalised path -> question ids
    examples: dict[str, tuple[Any, Any]] = {}
    for q in old:
        n = by_new.get(q["id"])
        if n is None:
            retrieval_diff[q["id"]] = "missing in new"
            continue
        if (why := same_retrieval(q, n)) is not None:
            retrieval_diff[q["id"]] = why
        d: dict[str, tuple[Any, Any]] = {}
        diff(q, n, [], d)
        for p, ex in d.items():
            record_diff_questions.setdefault(p, []).append(q["id"])
            examples.setdefault(p, ex)
    # hybrid's hop query: the question itself now (was the escaped Lucene query), checked question by question
    hop_query = [q["id"] for q in old if q["id"] in by_new
                 and [h["query"] for h in q["hops"]] != [h["query"] for h in by_new[q["id"]]["hops"]]]
    if hop_query:
        out["hop_query_is_question_now"] = sum(all(h["query"] == by_new[i]["query"] for h in by_new[i]["hops"])
                                               for i in hop_query)
        out["hop_query_differing"] = len(hop_query)
    out["questions_old"], out["questions_new"] = len(old), len(new)
    out["retrieval_identical"] = len(old) - len(retrieval_diff)
    out["retrieval_differing"] = len(retrieval_diff)
    out["retrieval_differences"] = retrieval_diff
    differing = set().union(*record_diff_questions.values()) if record_diff_questions else set()
    out["record_identical"] = len(old) - len(differing)
    out["record_differing"] = len(differing)
    out["record_differences"] = {p: {"questions": len(ids), "first_ids": ids[:5],
                                     **dict(zip(("example_old", "example_new"), _excerpt(*examples[p])))}
                                 for p, ids in sorted(record_diff_questions.items())}
    reports = {s: _load(p / "report.json", code[s]) for s, p in paths.items()}
    if recorded and (recorded_dir / recorded).is_file():
        reports["recorded"] = json.loads((recorded_dir / recorded).read_text())
    figs = {s: figures(r) for s, r in reports.items()}
    out["figures"] = figs
    keys = list(dict.fromkeys(k for f in figs.values() for k in f))
    out["figures_old_eq_new"] = all(_eq4(figs["old"].get(k), figs["new"].get(k)) for k in keys)
    if "recorded" in figs:
        # (named figures_*_eq_recorded for history: the lists hold the figures that differ to 4 decimals)
        known = [k for k in keys if figs["recorded"].get(k) is not None]
        out["figures_not_in_recorded"] = [k for k in keys if k not in known]
        out["figures_new_eq_recorded"] = [k for k in known if not _eq4(figs["new"].get(k), figs["recorded"].get(k))]
        out["figures_old_eq_recorded"] = [k for k in known if not _eq4(figs["old"].get(k), figs["recorded"].get(k))]
    out["same_config_recorded"] = same_config_recorded(reports["old"], recorded_dir)
    rd: dict[str, tuple[Any, Any]] = {}
    diff(_strip(reports["old"]), _strip(reports["new"]), [], rd)
    out["report_differences"] = {p: {"old": _short(a), "new": _short(b)} for p, (a, b) in sorted(rd.items())}
    return out


CONFIG_KEYS = ("top_k", "ranker", "alpha", "filter_extractor", "filter_mode", "search", "candidates", "reranker",
               "hops", "redundancy_pruning", "layer_top_k", "branches", "treehop_model", "max_steps",
               "max_paragraphs", "step_sources", "sub_questions", "max_targets")


def _config(report: dict[str, Any]) -> tuple[Any, ...]:
    p = dict(report.get("params") or {})
    if report.get("method") == "hybrid":
        p.setdefault("ranker", "naive")   # reports before the ranker was recorded: naive, the default then
    sel = report.get("selection") or {}
    return (report.get("method"), report.get("corpus"), report.get("questions"), tuple(sel.get("types") or ()),
            *(p.get(k) for k in CONFIG_KEYS))


def same_config_recorded(report: dict[str, Any], recorded_dir: Path) -> list[dict[str, Any]]:
    """Every report under bench/results/ of the same configuration (method, corpus, questions, params) on the
    whole question set: the recorded figures' own spread over the graph states they were measured on."""
    want, out = _config(report), []
    for f in sorted(recorded_dir.glob("*/*.json")):
        try:
            d = json.loads(f.read_text())
        except (ValueError, OSError):
            continue
        sel = d.get("selection") or {} if isinstance(d, dict) else {}
        if not isinstance(d, dict) or "official" not in d or sel.get("limit") or sel.get("per_type"):
            continue
        if _config(d) == want:
            o = d["official"]["overall"]
            out.append({"file": f"bench/results/{f.relative_to(recorded_dir)}", "started_at": d.get("started_at"),
                        **{m: o.get(m) for m in OFFICIAL if o.get(m) is not None}})
    return out


def _strip(report: dict[str, Any]) -> dict[str, Any]:
    """A report without its timing and run-bookkeeping fields."""
    drop = {"latency_ms", "phases_ms", "wall_seconds", "started_at", "finished_at", "run_id", "label"}
    return {k: v for k, v in report.items() if k not in drop}


def _eq4(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return round(a, 4) == round(b, 4)
    return a == b


def _excerpt(a: Any, b: Any, n: int = 60) -> tuple[Any, Any]:
    """Two differing values shown where they differ (strings from just before their first difference)."""
    if isinstance(a, str) and isinstance(b, str):
        i = next((j for j, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        start = max(0, i - 20)
        cut = ("..." if start else "")
        return cut + a[start:start + n] + ("..." if len(a) > start + n else ""), \
            cut + b[start:start + n] + ("..." if len(b) > start + n else "")
    return _short(a), _short(b)


def _short(v: Any, n: int = 300) -> Any:
    s = json.dumps(v, default=str)
    return v if len(s) <= n else s[:n] + "..."


def _f(v: Any) -> str:
    return "n/a" if v is None else f"{v:.4f}" if isinstance(v, float) else str(v)


def markdown(results: list[dict[str, Any]]) -> str:
    """The runs table and, per run, its figures old / new / recorded."""
    lines = [("| run | questions | retrieval identical | retrieval differing | records identical | records differing "
             "| figures old = new | new = recorded (4 dp) |"), "|---|---:|---:|---:|---:|---:|---|---|"]
    for r in results:
        if "status" in r:
            lines.append(f"| {r['run']} | {r['status']} | | | | | | |")
            continue
        rec = r.get("figures_new_eq_recorded")
        rec_s = "no recorded run" if rec is None else "yes" if not rec else "differ: " + ", ".join(rec)
        lines.append(f"| {r['run']} | {r['questions_old']} / {r['questions_new']} | {r['retrieval_identical']} | "
                     f"{r['retrieval_differing']} | {r['record_identical']} | {r['record_differing']} | "
                     f"{'yes' if r['figures_old_eq_new'] else 'no'} | {rec_s} |")
    for r in results:
        if "status" in r:
            continue
        figs = r["figures"]
        sides = [s for s in ("old", "new", "recorded") if s in figs]
        lines += ["", f"### {r['run']}", "",
                  (f"- old: `{r['old_env'] + ' ' if r['old_env'] else ''}mhgraph eval {r['old_args']} ...`; "
                  f"new: `mhgraph eval {r['new_args']} ...`; recorded: {r['recorded'] or 'none'}"), "",
                  "| figure | " + " | ".join(sides) + " |", "|---|" + "---:|" * len(sides)]
        keys = list(dict.fromkeys(k for s in sides for k in figs[s]))
        for k in keys:
            lines.append(f"| {k} | " + " | ".join(_f(figs[s].get(k)) for s in sides) + " |")
        if r.get("same_config_recorded"):
            lines += ["", "The same configuration in every recorded report (official Hits@4 / Hits@10 / MAP@10 / MRR@10):",
                      ""]
            for c in r["same_config_recorded"]:
                lines.append(f"- {c['file']} ({(c['started_at'] or '')[:16]}): " + " / ".join(
                    _f(c.get(m)) for m in ("hits@4", "hits@10", "map@10", "mrr@10")))
        if r["record_differences"]:
            lines += ["", "Record differences (field: questions; first example old -> new):", ""]
            for p, d in r["record_differences"].items():
                lines.append(f"- `{p}`: {d['questions']} questions; e.g. {d['first_ids'][0]}: "
                             f"`{json.dumps(d['example_old'], default=str)[:160]}` -> "
                             f"`{json.dumps(d['example_new'], default=str)[:160]}`")
        if r["report_differences"]:
            lines += ["", "report.json differences (timing and run bookkeeping excepted):", ""]
            for p, d in r["report_differences"].items():
                lines.append(f"- `{p}`: `{json.dumps(d['old'], default=str)[:160]}` -> "
                             f"`{json.dumps(d['new'], default=str)[:160]}`")
    return "\n".join(lines) + "\n"


def _commit(code: str | None) -> str | None:
    import subprocess

    if not code:
        return None
    done = subprocess.run(["git", "-C", code, "rev-parse", "HEAD"], capture_output=True, text=True, check=False)
    return done.stdout.strip() or None


def _machine() -> str:
    import os
    import platform

    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else ""
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{cpu}, {os.cpu_count()} cores, {mem:.1f} GiB"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", type=Path, required=True)
    ap.add_argument("--new", type=Path, required=True)
    ap.add_argument("--recorded", type=Path, default=Path(__file__).parent / "results")
    ap.add_argument("--old-code", help="the old code's checkout (written as <code> where a path names it)")
    ap.add_argument("--new-code", help="the new code's checkout (likewise)")
    ap.add_argument("--not-run", action="append", default=[], metavar="NAME=WHY",
                    help="a run left out, and why (recorded in the JSON)")
    ap.add_argument("--runs", nargs="*", default=list(RUNS))
    ap.add_argument("--json", type=Path, help="write the comparison here")
    ap.add_argument("--markdown", type=Path, help="write the tables (runs; figures old / new / recorded) here")
    args = ap.parse_args(argv)
    results = [compare_run(r, args.old, args.new, args.recorded, args.old_code, args.new_code) for r in args.runs]
    why = dict(item.split("=", 1) for item in args.not_run)
    for r in results:
        if "status" in r and r["run"] in why:
            r["status"] += f" ({why[r['run']]})"
    for r in results:
        if "status" in r:
            print(f"{r['run']}: {r['status']}")
            continue
        print(f"{r['run']}: questions {r['questions_old']}/{r['questions_new']} ids same {r['ids_identical']}; "
              f"retrieval identical {r['retrieval_identical']} differing {r['retrieval_differing']}; "
              f"record identical {r['record_identical']} differing {r['record_differing']}; "
              f"figures old==new {r['figures_old_eq_new']}; new!=recorded {r.get('figures_new_eq_recorded')}")
        for p, d in r["record_differences"].items():
            print(f"    {p}: {d['questions']} questions, e.g. {d['first_ids'][0]}: {d['example_old']!s:.120} -> "
                  f"{d['example_new']!s:.120}")
        for p, d in r["report_differences"].items():
            print(f"    report {p}: {d['old']!s:.100} -> {d['new']!s:.100}")
    if args.markdown:
        args.markdown.write_text(markdown(results), encoding="utf-8")
    if args.json:
        record = {
            "what": "architecture rerun (issue 24): old vs new code, same graph, per question and per run",
            "questions": "MultiHop-RAG, development split (2,045 questions)",
            "old_commit": _commit(args.old_code), "new_commit": _commit(args.new_code),
            "machine": _machine(), "embedding_model": "all-MiniLM-L6-v2",
            "language_model": "none (ircot, decompose: offline strategies; MHGRAPH_LLM_BACKEND=none)",
            "compared": "per question: ids, hops' chunk ids in order, scores within 1e-6, gold flags; every "
                        "other field but timing (seconds, phases, latency_s); per run: report.json figures",
            "runs": results}
        args.json.write_text(json.dumps(record, indent=1, default=str) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

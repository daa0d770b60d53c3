"""Summaries, Markdown tables and plots of evaluation runs.

`summarise` turns the per-question results of one run (`metrics.QuestionResult`) into a
JSON-ready summary dict:

    {"method", "label", "params", "questions", "scored", "r_max",
     "overall": GroupScores, "by_type": {type: GroupScores}, "by_difficulty": {bin: GroupScores},
     "null": NullScores, "latency_ms": {"p50", "p95", "mean"}}

(GroupScores / NullScores as dicts, see `mhgraph.eval.metrics`). The runner adds `"scoring"`
(ours | official | both: which scorings the report shows) and, unless it is ours, `"official"`
(the block of `mhgraph.eval.official.summarise`); a summary without "scoring" shows both when it
has an "official" block, else ours. `to_markdown` renders one summary,
`write_report` writes its JSON, Markdown and two PNG plots (F1 against hop; recall against the
mean number of chunks retrieved, one point per hop), and `compare` renders several summaries in
one table and one two-panel plot. Plots use matplotlib's Agg canvas directly (no pyplot, no
global backend change).
"""

from __future__ import annotations

import json
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from mhgraph.eval.difficulty import DIFFICULTY_EDGES, LAMBDA, bin_label, bin_labels
from mhgraph.eval.metrics import QuestionResult, aggregate, grouped, null_scores
from mhgraph.eval.official import RULE
from mhgraph.markdown import fmt as _f
from mhgraph.markdown import table as _table
from mhgraph.retrieval import registry

Summary = dict[str, Any]
RANKING_COLUMNS = {"hits@4": "Hits@4", "hits@10": "Hits@10", "map@10": "MAP@10", "mrr@10": "MRR@10"}


def run_label(method: str, params: Mapping[str, Any] | None = None) -> str:
    """`method k=v ...`: how a run is named in tables and legends."""
    shown = " ".join(f"{k}={v}" for k, v in sorted((params or {}).items()))
    return f"{method} {shown}".strip()


def latency_ms(records: Sequence[QuestionResult]) -> dict[str, float]:
    """p50, p95 and mean retrieval latency per question, in milliseconds, over all questions."""
    if not records:
        return {"p50": 0.0, "p95": 0.0, "mean": 0.0}
    ms = np.asarray([r.latency_s * 1000.0 for r in records])
    return {"p50": float(np.percentile(ms, 50)), "p95": float(np.percentile(ms, 95)), "mean": float(ms.mean())}


def summarise(
    records: Sequence[QuestionResult],
    *,
    method: str,
    params: Mapping[str, Any] | None = None,
    label: str | None = None,
    edges: Sequence[float] = DIFFICULTY_EDGES,
) -> Summary:
    """The summary dict of one run (layout in the module docstring)."""
    overall = aggregate(records)
    order = {b: i for i, b in enumerate(bin_labels(edges))}
    by_bin = grouped(records, lambda r: None if r.difficulty is None else bin_label(r.difficulty, edges))
    return {
        "method": method,
        "label": label or run_label(method, params),
        "params": dict(params or {}),
        "questions": len(records),
        "scored": overall.n,
        "r_max": max((len(r.hops) for r in records), default=0),
        "overall": asdict(overall),
        "by_type": {k: asdict(v) for k, v in grouped(records, lambda r: r.question_type).items()},
        "by_difficulty": {k: asdict(by_bin[k]) for k in sorted(by_bin, key=order.__getitem__)},
        "null": asdict(null_scores(records)),
        "latency_ms": latency_ms(records),
    }


def question_rows(records: Sequence[QuestionResult]) -> list[dict[str, Any]]:
    """The per-question results as JSON-ready dicts (for a JSON lines trace)."""
    return [asdict(r) for r in records]


# -- Markdown ---------------------------------------------------------------------------------
def _recall_keys(group: Mapping[str, Any]) -> list[str]:
    return [k for k in group.get("ranking", {}) if k.startswith("recall@")]


def _group_rows(groups: Mapping[str, Mapping[str, Any]], recall_keys: Sequence[str]) -> list[list[str]]:
    rows = []
    for name, g in groups.items():
        last = g["hops"][-1] if g["hops"] else {"f1": 0.0}
        rows.append([name, str(g["n"]), *(_f(g["ranking"].get(k, 0.0)) for k in [*RANKING_COLUMNS, *recall_keys]),
                     f"{g['avg_returned']:.1f}", _f(last["f1"])])
    return rows


def to_markdown(summary: Summary) -> str:
    """The report of one run: hop table, ranking tables (overall, per type, per difficulty), null questions.

    With scoring both, also ours beside the official rule per group; with scoring official, only
    the official rule's table (ours is in the summary all the same).
    """
    overall, null, lat = summary["overall"], summary["null"], summary["latency_ms"]
    recall_keys = _recall_keys(overall)
    scoring = _scoring(summary)
    lines = [
        f"# Retrieval report: {summary['label']}", "",
        f"Method `{summary['method']}`; parameters: "
        + (", ".join(f"{k}={v}" for k, v in summary["params"].items()) or "none") + ".",
        *_counts_lines(summary, scoring),
        *_corpus_lines(summary),
        f"Latency per question: p50 {lat['p50']:.1f} ms, p95 {lat['p95']:.1f} ms.", "",
    ]
    lines += _steps_lines(summary)
    if scoring == "official":  # ours is still computed (results.json, traces), but not shown
        return "\n".join([*lines, *_official_section(summary, scoring), *_diagnostics_sections(summary),
                          *_answers_section(summary), ""])
    lines += [
        "## Hop-conditioned precision / recall / F1", "",
        "Macro averages over the scored questions; D_r is the accumulated set after hop r "
        "(a method that stopped earlier keeps its last set).", "",
        *_table(["hop r", "mean size of D_r", "P_r", "R_r", "F1_r"],
                [[str(h["hop"]), f"{h['retrieved']:.1f}", _f(h["precision"]), _f(h["recall"]), _f(h["f1"])]
                 for h in overall["hops"]]),
        "", "## Ranking metrics on the final ranked list", "",
    ]
    header = ["group", "n", *RANKING_COLUMNS.values(), *(k.capitalize() for k in recall_keys), "avg K", "F1 (last hop)"]
    lines += _table(header, _group_rows({"all": overall, **summary["by_type"]}, recall_keys))
    if summary["by_difficulty"]:
        weight = summary.get("difficulty", {}).get("similarity_weight", LAMBDA)
        lines += ["", "## By MHTS difficulty D = h - s" if weight == LAMBDA else
                  f"## By MHTS difficulty D = h - {weight:g} s (equal-count bins)", ""]
        lines += _table(["D bin", *header[1:]], _group_rows(summary["by_difficulty"], recall_keys))
    if scoring == "both":
        lines += ["", *_official_section(summary, scoring)]
    lines += ["", "## Questions without gold chunks (left out of the averages)", "",
              *_table(["null questions", "mean chunks returned", "abstained (returned none)",
                       "evidence but no gold chunk"],
                      [[str(null["null_questions"]), f"{null['avg_returned']:.1f}", str(null["abstained"]),
                        str(null["unmatched"])]]), ""]
    lines += _diagnostics_sections(summary)
    lines += _answers_section(summary)
    if coverage := summary.get("gold_coverage"):  # written by the runner: how facts mapped to chunks
        lines += ["## Gold evidence coverage", "", "\n".join(coverage["lines"]), ""]
    return "\n".join(lines)


def _corpus_lines(summary: Summary) -> list[str]:
    """Which corpus was searched and how its chunks were embedded (written by the runner)."""
    if "embedding_model" not in summary:
        return []
    header = summary.get("embed_header", "none")
    return [f"Corpus '{summary['corpus']}': {summary['embedding_model']}"
            + (f" with a {header} header embedded above each chunk" if header != "none" else "")
            + f", chunks {summary['chunk_size']}/{summary['chunk_overlap']} tokens."]


def _steps_lines(summary: Summary) -> list[str]:
    """Latency of each step a method reports apart (e.g. filter, search, rerank)."""
    phases = summary.get("phases_ms")
    if not phases:
        return []
    return ["Per step: " + "; ".join(f"{name} p50 {p['p50']:.1f} ms, p95 {p['p95']:.1f} ms"
                                     for name, p in phases.items()) + ".", ""]


def _diagnostics_sections(summary: Summary) -> list[str]:
    """The sections of the methods' own diagnostics (a metadata filter, a reasoning chain, ...), each
    rendered by its record's class from the part of the summary kept under its kind."""
    lines: list[str] = []
    for kind, cls in registry.diagnostics_types().items():
        if summary.get(kind):
            lines += cls.report_section(summary[kind])
    return lines


def _answers_section(summary: Summary) -> list[str]:
    """Answer accuracy per type under both rules, abstention, failures and the model's cost."""
    answers = summary.get("answers")
    if not answers:
        return []
    rows = [[name, str(g["questions"]), _f(g["official"] or 0.0), _f(g["exact"] or 0.0), str(g["failed"])]
            for name, g in {"all": answers["overall"], **answers["by_type"]}.items()]
    abstention = answers["abstention"]
    usage = answers.get("usage")
    cost = (f"Model cost: {usage['calls']} calls ({usage['cache_hits']} answered from the cache), "
            f"{usage['prompt_tokens']} prompt and {usage['completion_tokens']} completion tokens, "
            f"{usage['seconds']:.1f} s in calls, {usage['failures']} failures." if usage
            else "No language model: no model cost.")
    null_share = abstention["abstained_on_null"]
    wrong_share = abstention["wrongly_abstained"]
    return ["## Answers", "",
            f"Reader: **{answers['reader']}**, from the top {answers['evidence_k']} chunks of the final ranking. "
            f"Rules: {answers['rule']}. Failed answers count as wrong.", "",
            *_table(["group", "n", "accuracy (official)", "exact match", "failed"], rows), "",
            f"Abstention: on {abstention['null_questions']} null questions, abstained on "
            f"{_f(null_share) if null_share is not None else '-'}; on {abstention['answerable_questions']} "
            f"answerable questions, wrongly abstained on {_f(wrong_share) if wrong_share is not None else '-'}.",
            "", cost, ""]


def _scoring(summary: Summary) -> str:
    """Which scorings the report shows (older summaries have no "scoring" field)."""
    return summary.get("scoring") or ("both" if "official" in summary else "ours")


def _counts_lines(summary: Summary, scoring: str) -> list[str]:
    """How many questions each scoring averages over; they differ (see `mhgraph.eval.official`)."""
    null = summary["null"]
    ours = (f"scored {summary['scored']} (with gold chunks), left out {null['count']} "
            f"(null {null['null_questions']}, evidence without gold chunk {null['unmatched']})")
    if scoring == "ours" or "official" not in summary:
        return [f"Questions {summary['questions']}: {ours}."]
    off = summary["official"]
    theirs = (f"scored {off['questions']} (every question with evidence; one whose facts no chunk holds "
              f"whole counts as 0), skipped {off['skipped_null']} null")
    if scoring == "official":
        return [f"Questions {summary['questions']}: {RULE} {theirs}."]
    return [f"Questions {summary['questions']}: ours {ours}; {RULE} {theirs}."]


def _official_section(summary: Summary, scoring: str) -> list[str]:
    """Ours and the official rule side by side per group (both), or the official rule alone."""
    off = summary.get("official")
    if not off:
        return []
    groups = ["all", *sorted(set(summary["by_type"]) | set(off["by_type"]))] if scoring == "both" \
        else ["all", *off["by_type"]]
    rows = []
    for name in groups:
        if scoring == "both":
            g = summary["overall"] if name == "all" else summary["by_type"].get(name)
            rows.append([name, "ours", *(_row(g["n"], g["ranking"]) if g else _row(0, {}))])
        o = off["overall"] if name == "all" else off["by_type"].get(name)
        rows.append([name, "official", *(_row(o["n"], o) if o else _row(0, {}))])
    title = f"Ours beside the {RULE}" if scoring == "both" else f"Ranking metrics, {RULE}"
    return [f"## {title}", "",
            "official: top 10 of the final ranked list; an item is relevant when a gold fact, spaces and "
            "newlines removed (nothing else), lies whole in the chunk with its metadata header; MAP@10 as "
            "retrieval_evaluate.py computes it; n = questions with evidence."
            + (" ours: gold chunks by normalised containment or span overlap (eval/gold.py), MAP@10 "
               "standard (ranx); n = questions with gold chunks." if scoring == "both" else ""), "",
            *_table(["group", "scoring", "n", *RANKING_COLUMNS.values()], rows),
            *_official_hops(off["overall"])]


def _official_hops(overall: Mapping[str, Any]) -> list[str]:
    """Hop-conditioned P/R/F1 under the official matching (absent from runs scored before it was kept)."""
    if not overall.get("hops"):
        return []
    return ["", "Per hop under the official matching (P_r / R_r / F1_r): every item of the accumulated set D_r "
                "(no depth cut); an item is relevant when it holds a gold fact whole; recall over the "
                "question's distinct facts.", "",
            *_table(["hop r", "P_r", "R_r", "F1_r"],
                    [[str(h["hop"]), _f(h["precision"]), _f(h["recall"]), _f(h["f1"])] for h in overall["hops"]])]


def _row(n: int, scores: Mapping[str, float]) -> list[str]:
    return [str(n), *(_f(scores.get(k, 0.0)) for k in RANKING_COLUMNS)]


# -- plots ------------------------------------------------------------------------------------
def _figure(panels: int = 1):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4 * panels, 4.4))
    FigureCanvasAgg(fig)
    return fig, [fig.add_subplot(1, panels, i + 1) for i in range(panels)]


def _tight(fig) -> None:
    with warnings.catch_warnings():   # a long legend label (a pipeline's stages) may not fit: drawn as it is
        warnings.filterwarnings("ignore", message="Tight layout not applied")
        fig.tight_layout()


def _draw_f1(ax, summaries: Sequence[Summary]) -> None:
    for s in summaries:
        hops = s["overall"]["hops"]
        ax.plot([h["hop"] for h in hops], [h["f1"] for h in hops], marker="o", label=s["label"])
    # at least one hop on the axis: a run of null questions alone has none to draw
    r_max = max(1, max((len(s["overall"]["hops"]) for s in summaries), default=0))
    ax.set_xticks(range(1, r_max + 1))
    ax.set_xlim(0.5, r_max + 0.5)
    ax.set_xlabel("hop r")
    ax.set_ylabel("F1_r (macro)")
    ax.set_title("F1 against hop")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")


def _draw_recall(ax, summaries: Sequence[Summary]) -> None:
    # One line per method through every (K, recall) point of its runs and hops, so runs of one
    # method at several K (or one multi-hop run) trace a recall curve.
    by_method: dict[str, list[tuple[float, float]]] = {}
    for s in summaries:
        by_method.setdefault(s["method"], []).extend((h["retrieved"], h["recall"]) for h in s["overall"]["hops"])
    for method, points in by_method.items():
        points.sort()
        ax.plot([k for k, _ in points], [r for _, r in points], marker="o", label=method)
    ax.set_xlabel("mean chunks retrieved K (size of D_r; one point per run and hop)")
    ax.set_ylabel("recall R_r (macro)")
    ax.set_title("Recall against K")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")


def _plot(draw, summaries: Sequence[Summary], path: Path | str) -> Path:
    fig, (ax,) = _figure()
    draw(ax, summaries)
    _tight(fig)
    fig.savefig(path, dpi=120)
    return Path(path)


def plot_f1_vs_hop(summaries: Sequence[Summary], path: Path | str) -> Path:
    """F1_r against r, one line per run."""
    return _plot(_draw_f1, summaries, path)


def plot_recall_vs_k(summaries: Sequence[Summary], path: Path | str) -> Path:
    """R_r against mean |D_r|, one line per method through its runs' hops."""
    return _plot(_draw_recall, summaries, path)


# -- files ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ReportFiles:
    summary: Path       # JSON
    markdown: Path
    plots: tuple[Path, ...]


def write_report(summary: Summary, out_dir: Path | str, stem: str = "report") -> ReportFiles:
    """Write `<stem>.json`, `<stem>.md`, `<stem>-f1-hop.png` and `<stem>-recall-k.png` under out_dir."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out / f"{stem}.json", out / f"{stem}.md"
    json_path.write_text(json.dumps(summary, indent=2, default=str) + "\n", encoding="utf-8")
    md_path.write_text(to_markdown(summary), encoding="utf-8")
    plots = (plot_f1_vs_hop([summary], out / f"{stem}-f1-hop.png"),
             plot_recall_vs_k([summary], out / f"{stem}-recall-k.png"))
    return ReportFiles(json_path, md_path, plots)


def _official_cells(summary: Summary, shown: bool) -> list[str]:
    """The official overall scores for a compare row ('-' for a run scored without them)."""
    if not shown:
        return []
    if "official" not in summary:
        return ["-"] * (len(RANKING_COLUMNS) + 1)
    overall = summary["official"]["overall"]
    return [*(_f(overall.get(k, 0.0)) for k in RANKING_COLUMNS),
            _f(overall["recall@10"]) if "recall@10" in overall else "-"]   # runs scored before it was kept


def _mixed_notes(runs: Sequence[Summary]) -> list[str]:
    """A line for each thing the compared runs do not share (the corpus searched, the questions
    asked): figures on different questions or corpora are not one comparison."""
    notes = []
    for key, what in (("corpus", "searched different corpora"), ("questions_file", "asked different questions")):
        seen = [(s.get("run_id") or s.get("label", "?"), s.get(key)) for s in runs]   # labels may repeat
        if len({value for _, value in seen}) > 1:
            notes.append(f"- **not like for like**: the runs {what} ("
                         + ", ".join(f"{run}: {value or '-'}" for run, value in seen) + ")")
    return [*notes, ""] if notes else []


def compare(runs: Sequence[Summary], out_dir: Path | str, stem: str = "compare") -> tuple[str, list[Path]]:
    """One Markdown table and one two-panel PNG (F1 against hop, recall against K) across runs."""
    if not runs:
        raise ValueError("compare needs at least one run summary")
    r_max = max(s["r_max"] for s in runs)
    recall_keys = list(dict.fromkeys(k for s in runs for k in _recall_keys(s["overall"])))
    with_official = any("official" in s for s in runs)
    official_header = ([f"{c} (official)" for c in (*RANKING_COLUMNS.values(), "Recall@10")] if with_official
                       else [])
    header = ["run", "method", "n", *(f"F1@{r}" for r in range(1, r_max + 1)), "best F1 (hop)",
              *RANKING_COLUMNS.values(), *official_header, *(k.capitalize() for k in recall_keys), "avg K",
              "p50 ms", "p95 ms"]
    rows = []
    for s in runs:
        hops, ranking = s["overall"]["hops"], s["overall"]["ranking"]
        f1 = [hops[min(r, len(hops)) - 1]["f1"] if hops else 0.0 for r in range(1, r_max + 1)]
        best = max(hops, key=lambda h: (h["f1"], -h["hop"])) if hops else {"f1": 0.0, "hop": 0}
        rows.append([s["label"], s["method"], str(s["scored"]), *map(_f, f1), f"{_f(best['f1'])} ({best['hop']})",
                     *(_f(ranking.get(k, 0.0)) for k in RANKING_COLUMNS), *_official_cells(s, with_official),
                     *(_f(ranking.get(k, 0.0)) for k in recall_keys),
                     f"{s['overall']['avg_returned']:.1f}", f"{s['latency_ms']['p50']:.1f}",
                     f"{s['latency_ms']['p95']:.1f}"])
    markdown = "\n".join(["# Comparison of runs", "",
                          "Macro averages over the questions with gold chunks; F1@r uses each run's "
                          "accumulated set after hop r (its last set beyond its last hop)."
                          + (f" Columns marked (official): the {RULE}, over the questions with evidence; "
                             "'-' for a run scored without it." if with_official else ""), "",
                          *_table(header, rows), "", *_mixed_notes(runs)])
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fig, (left, right) = _figure(2)
    _draw_f1(left, runs)
    _draw_recall(right, runs)
    _tight(fig)
    png = out / f"{stem}.png"
    fig.savefig(png, dpi=120)
    return markdown, [png]

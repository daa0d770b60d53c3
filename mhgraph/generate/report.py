"""The generation summary as lines for the terminal (the JSON beside the questions file has it all)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mhgraph.eval.difficulty import LAMBDA


def summary_lines(summary: dict[str, Any], path: Path, summary_path: Path) -> list[str]:
    checks = summary["checks"]
    lines = [(f"wrote {summary['questions']} questions to {path} ({summary['strategy']}, corpus "
             f"'{summary['corpus']}'); summary in {summary_path}")]
    for qtype, row in summary["by_type"].items():
        lines.append(f"  {qtype:18} {row['written']:5} of {row['asked']}")
    lines.append(f"  constructions      {', '.join(f'{k} {v}' for k, v in summary['by_construction'].items()) or '-'}")
    lines.append(f"  hops               {', '.join(f'{k}: {v}' for k, v in summary['hops'].items()) or '-'}")
    bins = summary["difficulty"]["bins"]
    weight = summary["difficulty"].get("similarity_weight", LAMBDA)
    shown = "" if weight == LAMBDA else f"(lambda {weight:g}) "
    mean = summary["difficulty"]["mean"]
    lines.append(f"  difficulty D       {shown}mean {'-' if mean is None else mean}; "
                 f"{', '.join(f'{k} {v}' for k, v in bins.items()) or '-'}")
    share = checks["verbatim_share"]
    lines.append(f"  facts verbatim     {checks['facts_verbatim']} of {checks['facts']}"
                 + (f" ({share:.1%})" if share is not None else ""))
    lines.append(f"  contain answer     {checks['questions_containing_answer']}")
    lines.append(f"  near-duplicates    {checks['near_duplicates_removed']} removed")
    nulls = checks["null_best_score"]
    if nulls["null_mean"] is not None:
        lines.append(f"  null questions     best retrieval score mean {nulls['null_mean']} (answerable median "
                     f"{nulls['answerable_median']}; {nulls['nulls_above_answerable_median']} nulls above it)")
    if checks["lexical_overlap"] is not None:
        lines.append(f"  lexical overlap    {checks['lexical_overlap']:.3f} of question words in its facts")
    if checks["answerable"]:
        a = checks["answerable"]
        lines.append(f"  answerable         {a['answered_right']} of {a['sample']} answered from their own evidence "
                     f"by {a['model']}")
    rejected = checks["rejected"]
    if rejected:
        lines.append("  rejected           " + "; ".join(f"{v} {k}" for k, v in rejected.items()))
    for note in summary["notes"]:
        lines.append(f"  note: {note}")
    lines.append(f"  seconds            {summary['seconds'].get('total')}")
    return lines

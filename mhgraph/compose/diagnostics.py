"""`StageTrace`: what each stage of a composed pipeline kept for one question (chunk ids in
order) and how long it took. Over a run, with the gold chunks, it says where gold evidence is
lost: among the candidates, after expansion (the pool fusion ranks), at the depth the next stage
sees (the reranker's depth, the whole fused list for balance or diversify, else the final depth), and in the
final list."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from statistics import fmean
from typing import Any

from mhgraph.types import Diagnostics, RetrievalResult, RunContext


@dataclass(frozen=True)
class StageTrace(Diagnostics):
    kind = "compose"

    pipeline: str                                   # the stages, canonical form
    # {"stage", "detail", "seconds", "chunks": [ids in order]}, in running order
    stages: tuple[dict[str, Any], ...]
    note: str | None = None                         # e.g. a filter skipped on a corpus without metadata

    def to_json(self) -> dict[str, Any]:
        return {"pipeline": self.pipeline, "stages": [dict(s) for s in self.stages],
                **({"note": self.note} if self.note else {})}

    def lines(self, result: RetrievalResult, width: int) -> list[str]:
        return [f"pipeline: {self.pipeline}" + (f" ({self.note})" if self.note else ""),
                *(f"  {s['stage']:<16} {len(s['chunks']):>4} chunks {s['seconds'] * 1000:8.1f} ms  {s['detail']}"
                  for s in self.stages)]

    @classmethod
    def summarise(cls, records: Mapping[str, StageTrace], run: RunContext) -> dict[str, Any] | None:
        if not records:
            return None
        first = next(iter(records.values()))
        names = [s["stage"] for s in first.stages]
        rows = []
        for i, name in enumerate(names):
            recall, found, seconds, size = [], [], [], []
            for qid, trace in records.items():
                stage = trace.stages[i]
                seconds.append(stage["seconds"])
                size.append(len(stage["chunks"]))
                gold = set(run.gold.get(qid, ()))
                if gold:
                    kept = gold & set(stage["chunks"])
                    recall.append(len(kept) / len(gold))
                    found.append(bool(kept))
            rows.append({"stage": name, "detail": first.stages[i]["detail"], "ms_mean": round(fmean(seconds) * 1000, 2),
                         "chunks_mean": round(fmean(size), 1),
                         "gold_recall": round(fmean(recall), 4) if recall else None,
                         "any_gold": round(fmean(found), 4) if found else None})
        return {"pipeline": first.pipeline, "questions": len(records),
                "with_gold": sum(1 for qid in records if run.gold.get(qid)), "stages": rows,
                **({"note": first.note} if first.note else {})}

    @classmethod
    def report_section(cls, summary: Mapping[str, Any]) -> list[str]:
        lines = ["## Pipeline stages: where gold is lost", "",
                 f"`{summary['pipeline']}`" + (f" ({summary['note']})" if summary.get("note") else "")
                 + f"; {summary['with_gold']} of {summary['questions']} questions with gold chunks (our gold "
                 "rule). Gold recall: the share of a question's gold chunks in the stage's output; any gold: the "
                 "share of questions with at least one.", "",
                 "| stage | what | mean ms | mean chunks | gold recall | any gold |", "|---|---|---|---|---|---|"]
        for row in summary["stages"]:
            recall = "-" if row["gold_recall"] is None else f"{row['gold_recall']:.3f}"
            found = "-" if row["any_gold"] is None else f"{row['any_gold']:.3f}"
            lines.append(f"| {row['stage']} | {row['detail']} | {row['ms_mean']:.1f} | {row['chunks_mean']:.1f} | "
                         f"{recall} | {found} |")
        return [*lines, ""]

"""`TreeHopTree`: the branches TreeHop kept at each hop for one question (the tree itself is in
the hops: each chunk's parent_id is the chunk whose branch led to it, traced as LED_TO)."""

from __future__ import annotations

from dataclasses import dataclass
from statistics import fmean
from typing import Any, Mapping

from mhgraph.types import Diagnostics, RetrievalResult, RunContext


@dataclass(frozen=True)
class TreeHopTree(Diagnostics):
    kind = "tree"

    branches: tuple[int, ...]    # live branches after each hop
    model: str | None = None     # the model's name, for the trace (a pipeline's params do not hold it)

    def to_json(self) -> dict[str, Any]:
        return {"branches": list(self.branches)}

    def lines(self, result: RetrievalResult, width: int) -> list[str]:
        return [f"model: {self.model or result.params.get('treehop_model')}; branches per hop: "
                + " ".join(str(n) for n in self.branches)]

    @classmethod
    def summarise(cls, records: Mapping[str, "TreeHopTree"], run: RunContext) -> dict[str, Any] | None:
        if not records:
            return None
        depth = max(len(r.branches) for r in records.values())
        return {"questions": len(records),
                "branches_mean": [round(fmean(r.branches[h] if h < len(r.branches) else 0
                                              for r in records.values()), 3) for h in range(depth)],
                "stopped_early": sum(len(r.branches) < depth or r.branches[-1] == 0 for r in records.values())}

    @classmethod
    def report_section(cls, tree: Mapping[str, Any]) -> list[str]:
        return ["## TreeHop tree", "",
                "Mean live branches after each hop: " + ", ".join(
                    f"hop {h} {n:.2f}" for h, n in enumerate(tree["branches_mean"], start=1))
                + f"; {tree['stopped_early']} of {tree['questions']} questions ran out of branches before "
                  "the last hop (redundancy pruning).", ""]

"""`ClaimTrail`: which targets a claims search asked and which claim each led to, per hop, as a
typed diagnostics record; traces store it as (:Question)-[:ASKED_TARGET]->(:Target) and
(:Question)-[:USED_CLAIM]->(:Claim), so Browser walks question -> target -> claim -> chunk."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from mhgraph import cypher
from mhgraph.types import Diagnostics, RetrievalResult, RunContext


@dataclass(frozen=True)
class ClaimTrail(Diagnostics):
    kind = "claims"

    finder: str                          # the target finder's label
    targets: tuple[str, ...]             # hop 1: the question's targets
    further_targets: tuple[str, ...]     # hop 2: the targets hop-1 claims named
    # {"hop", "target" (its key), "claim" (id), "claim_text", "chunk"[, "bridged_from"]}
    claims: tuple[dict[str, Any], ...]
    failure: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"targets": list(self.targets), "further_targets": list(self.further_targets),
                "claims": [dict(c) for c in self.claims], **({"failure": self.failure} if self.failure else {})}

    def lines(self, result: RetrievalResult, width: int) -> list[str]:
        return [f"target finder: {self.finder}; targets: {', '.join(self.targets) or '-'}; across bridges: "
                f"{', '.join(self.further_targets) or '-'}" + (f" ({self.failure})" if self.failure else ""),
                *(f"  hop {c['hop']} [{c['target']}] {c['claim_text'][:width]}" for c in self.claims)]

    @classmethod
    def write_traces(cls, records: Mapping[str, "ClaimTrail"], run: RunContext) -> None:
        rows = [{"question": qid, "hop": c["hop"], "target": c["target"], "claim": c["claim"]}
                for qid, trail in records.items() for c in trail.claims]
        for i in range(0, len(rows), 2000):
            run.driver.execute_query(cypher.load("eval/write_claims"), run=run.run_id, rows=rows[i:i + 2000],
                                     corpus=run.corpus, database_=run.database)

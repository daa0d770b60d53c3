"""`PPRWalk`: what graph traversal did for one question, as a typed diagnostics record: the seed
facts (claims), the names they seeded with their weights, and the names the walk ranked highest.
Traces store it as (:Question)-[:SEED_FACT {run, score}]->(:Claim) and
(:Question)-[:WALKED {run, role, weight, rank}]->(:Topic|Target), so Browser draws the walk
(cypher/browser/ppr_walk.cypher)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from statistics import fmean
from typing import Any

from mhgraph import cypher
from mhgraph.types import Diagnostics, RetrievalResult, RunContext


@dataclass(frozen=True)
class PPRWalk(Diagnostics):
    kind = "ppr"

    # {"claim" (id), "text", "score"}: the claims nearest the question
    facts: tuple[dict[str, Any], ...]
    # {"node" (element id), "label", "name", "weight"}: names seeded, heaviest first
    seeds: tuple[dict[str, Any], ...]
    # {"node", "label", "name", "score"}: the names the walk ranked highest
    top_names: tuple[dict[str, Any], ...]
    seeded_chunks: int                   # chunks seeded by dense similarity
    iterations: int
    walk_seconds: float
    # {"filter": the sources and dates read from the question, "seeded": chunks seeded per source}
    # when metadata seeds are on; None when off
    metadata: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"facts": [dict(f) for f in self.facts], "seeds": [dict(s) for s in self.seeds],
                "top_names": [dict(n) for n in self.top_names], "seeded_chunks": self.seeded_chunks,
                "iterations": self.iterations, "walk_seconds": round(self.walk_seconds, 4),
                **({"metadata": self.metadata} if self.metadata is not None else {})}

    def lines(self, result: RetrievalResult, width: int) -> list[str]:
        return [f"seed facts ({len(self.facts)}):",
                *(f"  {f['score']:.3f} {f['text'][:width]}" for f in self.facts),
                "seeds: " + ", ".join(f"{s['name']} ({s['label']}, {s['weight']:.3g})" for s in self.seeds)
                + f"; {self.seeded_chunks} chunks by dense similarity",
                *(["metadata seeds: " + (", ".join(f"{name} ({n} chunks)" for name, n in self.metadata["seeded"].items())
                                         or "none named")] if self.metadata is not None else []),
                "walk's top names: " + ", ".join(f"{n['name']} ({n['score']:.3g})" for n in self.top_names)
                + f"; {self.iterations} iterations, {self.walk_seconds * 1000:.1f} ms"]

    @classmethod
    def summarise(cls, records: Mapping[str, PPRWalk], run: RunContext) -> dict[str, Any] | None:
        if not records:
            return None
        walks = list(records.values())
        return {"questions": len(walks), "seeds_mean": round(fmean(len(w.seeds) for w in walks), 2),
                "iterations_mean": round(fmean(w.iterations for w in walks), 1),
                "walk_ms_mean": round(fmean(w.walk_seconds for w in walks) * 1000, 2),
                "no_facts": sum(not w.facts for w in walks),
                "metadata_seeded": sum(bool(w.metadata and any(w.metadata["seeded"].values())) for w in walks)}

    @classmethod
    def report_section(cls, summary: Mapping[str, Any]) -> list[str]:
        walk = (f"Mean seed names per question {summary['seeds_mean']}; the walk took "
                f"{summary['iterations_mean']} iterations and {summary['walk_ms_mean']} ms on average; "
                f"{summary['no_facts']} of {summary['questions']} questions found no seed fact "
                f"(dense seeds alone); {summary.get('metadata_seeded', 0)} had chunks seeded by the sources "
                "or dates they name.")
        return ["## Graph traversal (personalized PageRank)", "", walk, ""]

    @classmethod
    def write_traces(cls, records: Mapping[str, PPRWalk], run: RunContext) -> None:
        facts = [{"question": qid, "claim": f["claim"], "score": f["score"]}
                 for qid, walk in records.items() for f in walk.facts]
        names = [{"question": qid, "node": n["node"], "role": role, "weight": n.get("weight", n.get("score")),
                  "rank": rank}
                 for qid, walk in records.items()
                 for role, group in (("seed", walk.seeds), ("visited", walk.top_names))
                 for rank, n in enumerate(group, start=1)]
        for i in range(0, len(facts), 2000):
            run.driver.execute_query(cypher.load("eval/write_seed_facts"), run=run.run_id, rows=facts[i:i + 2000],
                                     database_=run.database)
        for i in range(0, len(names), 2000):
            run.driver.execute_query(cypher.load("eval/write_walk"), run=run.run_id, rows=names[i:i + 2000],
                                     database_=run.database)

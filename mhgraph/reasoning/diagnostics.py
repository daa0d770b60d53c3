"""`ReasoningChain`: the steps a reasoning method took for one question (IR-CoT's thoughts and
their BM25 queries, or decomposition's sub-questions), as a typed diagnostics record.

A run's chains are summarised as the strategy (a model, or the labelled offline strategy), steps
per question, why chains stopped, model failures and the model's usage; traces store each step:
(:Question)-[:STEP]->(:Step {query, thought})-[:FETCHED]->(:Chunk), (:Step)-[:NEXT_STEP]->(:Step)
and (:Chunk)-[:PROMPTED]->(:Step).
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import fmean
from typing import Any, Mapping

from mhgraph import cypher
from mhgraph.types import Diagnostics, RetrievalResult, RunContext


@dataclass(frozen=True)
class ReasoningChain(Diagnostics):
    kind = "reasoning"

    strategy: str                        # the reasoner's or decomposer's label
    unit: str                            # what a step is: "steps after the first search" / "sub-questions asked"
    # one per hop: {"hop", "thought", "query", "parent"} (parent: the chunk whose text led to the thought)
    steps: tuple[dict[str, Any], ...]
    stop: str | None = None              # why an IR-CoT chain ended
    thoughts: tuple[str, ...] | None = None
    sub_questions: tuple[str, ...] | None = None
    failure: str | None = None           # the model's failure, when it failed
    first_search: bool = False           # step 1 is the question's own search (not a reasoning step)

    @property
    def step_count(self) -> int:
        return len(self.steps) - 1 if self.first_search else len(self.steps)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.sub_questions is not None:
            out["sub_questions"] = list(self.sub_questions)
        out["steps"] = [dict(s) for s in self.steps]
        if self.stop is not None:
            out["stop"] = self.stop
        if self.thoughts is not None:
            out["reasoning"] = list(self.thoughts)
        if self.failure:
            out["failure"] = self.failure
        return out

    def lines(self, result: RetrievalResult, width: int) -> list[str]:
        if self.sub_questions is not None:
            return [f"decomposer: {self.strategy}"
                    + (f"; failed ({self.failure}), the question asked whole" if self.failure else "")]
        return [f"reasoner: {self.strategy}; stopped: {self.stop}" + (f" ({self.failure})" if self.failure else ""),
                *(f"  thought {n}: {t}" for n, t in enumerate(self.thoughts or (), start=1))]

    @classmethod
    def summarise(cls, records: Mapping[str, "ReasoningChain"], run: RunContext) -> dict[str, Any]:
        chains = list(records.values())
        steps = [c.step_count for c in chains]
        stops: dict[str, int] = {}
        for c in chains:
            if c.stop is not None:
                stops[c.stop] = stops.get(c.stop, 0) + 1
        return {"strategy": chains[0].strategy if chains else None, "offline": run.llm is None,
                "questions": len(chains),
                "unit": chains[0].unit if chains else "", "steps_mean": float(fmean(steps)) if steps else 0.0,
                "steps_max": max(steps, default=0), "stops": dict(sorted(stops.items())),
                "failures": sum(c.failure is not None for c in chains),
                "llm_usage": run.llm.usage.as_dict() if run.llm is not None else None,
                "held_out": sorted(run.held_out)}

    @classmethod
    def report_section(cls, r: Mapping[str, Any]) -> list[str]:
        usage = r.get("llm_usage")
        lines = ["## Reasoning", "",
                 f"Strategy: **{r['strategy']}**" + (" (offline: no language model; not a model's figures)"
                                                     if r["offline"] else "") + ". "
                 f"Average {r['unit']}: {r['steps_mean']:.2f} (max {r['steps_max']}); "
                 f"stops: " + (", ".join(f"{k} {v}" for k, v in r["stops"].items()) or "-") + "; "
                 f"model failures: {r['failures']}."]
        if usage:
            n = max(1, r.get("questions") or 1)
            lines.append(f"Model calls {usage['calls']} ({usage['calls'] / n:.2f} per question; cache hits "
                         f"{usage['cache_hits']}), prompt tokens {usage['prompt_tokens'] / n:.0f} and completion "
                         f"tokens {usage['completion_tokens'] / n:.0f} per question, {usage['seconds'] / n:.1f} s "
                         "per question in model calls.")
        if held := r.get("held_out"):
            lines.append("Left out of every figure (the few-shot demonstrations, whichever strategy runs): "
                         + "; ".join(f"\"{q[:90]}...\"" for q in held) + ".")
        return [*lines, ""]

    @classmethod
    def write_traces(cls, records: Mapping[str, "ReasoningChain"], run: RunContext) -> None:
        rows = []
        for qid, chain in records.items():
            hops = {h.index: h for h in run.results[qid].hops}
            gold = set(run.gold.get(qid, ()))
            for step in chain.steps:
                hop = hops.get(step["hop"])
                fetched = [{"chunk": c.chunk_id, "rank": c.rank, "score": c.score, "gold": c.chunk_id in gold}
                           for c in (hop.chunks if hop else ())]
                rows.append({"question": qid, "hop": step["hop"], "query": step["query"],
                             "thought": step["thought"], "parent": step["parent"], "previous_hop": step["hop"] - 1,
                             "fetched": fetched})
        for i in range(0, len(rows), 500):   # in hop order within a batch: NEXT_STEP finds the step before
            run.driver.execute_query(cypher.load("eval/write_steps"), run=run.run_id, rows=rows[i:i + 500],
                                     database_=run.database)


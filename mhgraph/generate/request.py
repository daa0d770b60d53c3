"""What `mhgraph generate` is asked for, validated (pydantic): one place for the defaults and the
one-line errors of bad values."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from mhgraph.eval.difficulty import LAMBDA
from mhgraph.generate.candidate import COMPARISON, INFERENCE, NULL, TEMPORAL, TYPE_NAMES

# MultiHop-RAG's published question counts by type: the default mix
TYPE_SHARES = {INFERENCE: 816, COMPARISON: 856, TEMPORAL: 583, NULL: 301}
CONSTRUCTIONS = ("multihop-rag", "mhts", "both")
GROUPINGS = ("story", "random")
WORDINGS = ("describe", "quote")
_NUMBER = r"\s*(-?\d+(?:\.\d*)?|-?\.\d+)\s*"
RANGE = re.compile(rf"^{_NUMBER}(?:-{_NUMBER})?$")   # LOW-HIGH, or one value


class GenerateRequest(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    n: int = Field(500, ge=1, description="questions to write")
    types: tuple[str, ...] = Field(tuple(TYPE_NAMES), description="question types (inference, comparison, temporal, null)")
    construction: Literal["multihop-rag", "mhts", "both"] = "both"
    hops: tuple[int, int] = Field((2, 4), description="evidence facts per question, low-high")
    grouping: Literal["story", "random"] = Field(
        "story", description="MultiHop-RAG construction: how a group's articles are drawn among those sharing its "
                             "bridge (story: the closest to a first drawn one; random: any)")
    coherence: float = Field(0.9, ge=0, lt=1, description="story grouping: an article joins when its chunk is at "
                             "least as close to the story's as this quantile of random pairs of chunks from different "
                             "articles")
    wording: Literal["describe", "quote"] = Field(
        "describe", description="offline templates: describe each article (source, headline, the fact's rarest names) "
                                "or quote its fact")
    seed: int = 0
    difficulty: tuple[float, float] | None = Field(None, description="keep questions with D in [low, high]")
    similarity_weight: float = Field(LAMBDA, ge=0, description="lambda of D = h - lambda * s (MHTS: 1)")
    duplicate_threshold: float = Field(0.92, gt=0, le=1, description="cosine at which two questions are duplicates")
    components: int | None = Field(None, ge=1, description="MHTS mixture components (default ~ sqrt(claims / 2))")
    theta: float = Field(0.1, gt=0, le=1, description="MHTS soft-assignment threshold")
    answer_check: int = Field(50, ge=0, description="questions a model answers from their own evidence")

    @field_validator("types", mode="before")
    @classmethod
    def _types(cls, value):
        items = [v.strip() for v in (value.split(",") if isinstance(value, str) else value) if v.strip()]
        # the file's own names too ('inference_query'), as eval --types takes both
        items = [v.removesuffix("_query") if v.removesuffix("_query") in TYPE_NAMES else v for v in items]
        unknown = [v for v in items if v not in TYPE_NAMES]
        if unknown or not items:
            raise ValueError(f"unknown question type {', '.join(unknown) or '(none)'}; choose from "
                             f"{', '.join(TYPE_NAMES)} (or with '_query')")
        return tuple(dict.fromkeys(items))

    @field_validator("hops", "difficulty", mode="before")
    @classmethod
    def _range(cls, value):
        if isinstance(value, str):
            # either bound may be negative (D is, with a large similarity weight): "-20--10", "-5-0.5"
            found = RANGE.match(value)
            if not found:
                raise ValueError(f"expected LOW-HIGH, got {value!r}")
            low, high = found.group(1), found.group(2)
            return (float(low), float(high if high is not None else low))
        return value

    # field validators (not a model validator): an error names its option
    @field_validator("hops")
    @classmethod
    def _hops_ordered(cls, value):
        low, high = value
        if not 2 <= low <= high <= 4:   # one fact is no multi-hop question; MultiHop-RAG's have 2 to 4
            raise ValueError(f"hops must be within 2-4 and low <= high, got {low}-{high}")
        return value

    @field_validator("difficulty")
    @classmethod
    def _difficulty_ordered(cls, value):
        if value and value[0] > value[1]:
            raise ValueError(f"difficulty low > high: {value[0]}-{value[1]}")
        return value

    @field_validator("construction")
    @classmethod
    def _mhts_needs_inference(cls, value, info: ValidationInfo):
        if value == "mhts" and "inference" not in info.data.get("types", ("inference",)):
            raise ValueError("mhts writes inference questions only: include inference in --types")
        return value

    @property
    def question_types(self) -> tuple[str, ...]:
        return tuple(TYPE_NAMES[t] for t in self.types)


def quotas(request: GenerateRequest) -> dict[tuple[str, str], int]:
    """(construction, question type) -> questions asked of it: n split by MultiHop-RAG's type shares
    (largest remainder); with both constructions, the inference share split between them (MHTS
    writes inference questions only)."""
    types = request.question_types
    weights = {t: TYPE_SHARES[t] for t in types}
    parts: dict[tuple[str, str], float] = {}
    for t in types:
        share = request.n * weights[t] / sum(weights.values())
        if request.construction == "mhts":
            parts[("mhts", t)] = share if t == INFERENCE else 0.0
        elif request.construction == "both" and t == INFERENCE:
            parts[("multihop-rag", t)] = share / 2
            parts[("mhts", t)] = share / 2
        else:
            parts[("multihop-rag", t)] = share
    if request.construction == "mhts":   # the whole request goes to the one type MHTS writes
        parts = {("mhts", INFERENCE): float(request.n)} if INFERENCE in types else parts
    out = {k: int(v) for k, v in parts.items()}
    rest = request.n - sum(out.values())
    for k in sorted(parts, key=lambda k: parts[k] - int(parts[k]), reverse=True)[:max(rest, 0)]:
        if parts[k] > 0:
            out[k] += 1
    return out

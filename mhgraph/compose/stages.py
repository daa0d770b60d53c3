"""A pipeline's stages, written as one line: `filter=rules candidates=hybrid expand=ppr,treehop
fuse=rrf rerank=bi-encoder:bge-small-en-v1.5`. Stages run in that fixed order whatever order
they are written in; a stage left out takes its default (no filter, hybrid candidates, no
expansion, reciprocal rank fusion, no reranker).

- filter: a metadata filter extractor of `metarag` (rules, llm, reference, gold); the candidates
  are then searched inside the filter (metarag's filtered search; vector or hybrid candidates).
  `EXTRACTOR:drop-words` leaves the words naming the filter's sources and dates out of the hybrid
  search's BM25 query (metarag's `filter_words`);
- share: source, with a filter: each source the question's filter names searched apart for its
  share of the candidates (metarag's `per_source`), or none: one search inside the filter;
- candidates: vector, bm25 or hybrid; `hybrid:N` fuses N deep, each side giving at least its
  first N hits before the candidates are cut (metarag's `hybrid_depth`, hybrid's `depth`);
- expand: methods whose own rankings join the candidates (any method but compose; usually
  treehop, claims, ppr, ircot); a method that can use the candidates does (ppr seeds its walk
  with them). `METHOD:W` gives that method's ranking the weight W (0 to 1) in the fusion, the
  candidates' being 1 (`expand=treehop,ircot:0.5`); a method written without one takes the
  `expand_weight` option (1 unless set), so a named pipeline carries its weights in its line;
- fuse: rrf (reciprocal rank) or linear (each ranking's scores min-max normalised, summed);
- rerank: a reranker as metarag names one (a cross-encoder, multihop-rag-minilm, nanoranker,
  bi-encoder:MODEL, sentences:MODEL, kfold:DIR), or none; `RERANKER:N` has it score the best N
  fused chunks (without `:N`, compose's `rerank_k`, else 20), as `hybrid:N` says how deep the
  candidates fuse;
- balance: source or document, the kept chunks taken from each in turn, or none;
- diversify: N, at most N chunks of one document among those kept (the others move below them),
  or none (mhgraph/compose/diversity.py, as balance). These two and share written out only when
  set, so a pipeline line without them reads as before.
"""

from __future__ import annotations

from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    PositiveInt,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from mhgraph.errors import MhgraphError
from mhgraph.filters.extractors import EXTRACTORS
from mhgraph.rerank.models import BI_ENCODER, KFOLD, SENTENCES

STAGES = ("filter", "share", "candidates", "expand", "fuse", "rerank", "balance", "diversify")
NONE = "none"
ONLY_HYBRID = "only hybrid candidates fuse two searches: write {kind}, without a depth"
ONLY_RERANK = "the chunks a reranker scores are given with one: write rerank=RERANKER:N"
DROP_WORDS = "drop-words"


class PipelineStages(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    filter: str | None = None
    share: Literal["source"] | None = None
    candidates: Literal["vector", "bm25", "hybrid"] = "hybrid"
    # hybrid:N, the hits each side of the hybrid search gives at least (None: the search's own)
    depth: PositiveInt | None = None
    # EXTRACTOR:drop-words, the filter's words left out of the BM25 query (keep: the question whole)
    filter_words: Literal["keep", "drop"] = "keep"
    expand: tuple[str, ...] = ()
    # (method, its ranking's weight in the fusion) for the methods written METHOD:W; pairs, not a
    # dict, so the frozen model stays hashable
    expand_weights: tuple[tuple[str, float], ...] = ()
    fuse: Literal["rrf", "linear"] = "rrf"
    rerank: str | None = None
    # RERANKER:N, the fused chunks the reranker scores (None: compose's rerank_k)
    rerank_k: PositiveInt | None = None
    balance: Literal["source", "document"] | None = None
    diversify: PositiveInt | None = None

    @field_validator("filter")
    @classmethod
    def _known_extractor(cls, value: str | None) -> str | None:
        if value is not None and value not in EXTRACTORS:
            raise ValueError(f"unknown filter extractor '{value}' (extractors: {', '.join(EXTRACTORS)})")
        return value

    @field_validator("share")
    @classmethod
    def _shared_inside_a_filter(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None and info.data.get("filter") is None:
            raise ValueError("the candidates are shared among the sources a filter names: add a filter stage")
        return value

    @field_validator("depth")
    @classmethod
    def _depth_of_hybrid(cls, value: int | None, info: ValidationInfo) -> int | None:
        if value is not None and info.data.get("candidates") != "hybrid":
            raise ValueError(ONLY_HYBRID.format(kind=info.data.get("candidates")))
        return value

    @field_validator("filter_words")
    @classmethod
    def _words_of_a_keyword_search(cls, value: str, info: ValidationInfo) -> str:
        if value == "drop" and info.data.get("filter") is None:
            raise ValueError(f"{DROP_WORDS} needs an extractor: write filter=EXTRACTOR:{DROP_WORDS}")
        if value == "drop" and info.data.get("candidates") != "hybrid":
            raise ValueError(f"{DROP_WORDS} leaves the filter's words out of the hybrid search's BM25 query; "
                             f"{info.data.get('candidates')} candidates have none: write candidates=hybrid")
        return value

    @field_validator("rerank_k")
    @classmethod
    def _scored_by_a_reranker(cls, value: int | None, info: ValidationInfo) -> int | None:
        if value is not None and info.data.get("rerank") in (None, "", NONE):
            raise ValueError(ONLY_RERANK)
        return value

    @field_validator("expand")
    @classmethod
    def _known_methods(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        from mhgraph.retrieval import (
            registry,  # the registry imports this module's method lazily
        )

        known = [n for n in registry.names() if n != "compose"]
        for name in value:
            if name not in known:
                raise ValueError(f"'{name}' cannot expand (methods: {', '.join(known)})")
        if len(set(value)) != len(value):
            raise ValueError("a method is named twice")
        return value

    @field_validator("expand_weights")
    @classmethod
    def _weights_in_range(cls, value: tuple[tuple[str, float], ...],
                          info: ValidationInfo) -> tuple[tuple[str, float], ...]:
        for name, weight in value:
            if name not in info.data.get("expand", ()):
                raise ValueError(f"a weight is given for {name}, which does not expand")
            if not 0.0 <= weight <= 1.0:
                raise ValueError(f"the weight of {name} must be from 0 to 1, got {weight:g}")
        return value

    def weight(self, name: str, default: float) -> float:
        """The fusion weight of expansion `name`: its own in the line, else `default`."""
        return dict(self.expand_weights).get(name, default)

    def describe(self) -> str:
        """The canonical one-line form (what runs, every stage written out)."""
        expand = ",".join(self._expansion(n) for n in self.expand) or NONE
        words = f":{DROP_WORDS}" if self.filter_words == "drop" else ""
        return " ".join([f"filter={self.filter or NONE}{words}", *([f"share={self.share}"] if self.share else []),
                         f"candidates={self.candidates}{f':{self.depth}' if self.depth else ''}", f"expand={expand}",
                         f"fuse={self.fuse}", f"rerank={self._written_reranker()}",
                         *([f"balance={self.balance}"] if self.balance else []),
                         *([f"diversify={self.diversify}"] if self.diversify else [])])

    def _written_reranker(self) -> str:
        return f"{self.rerank}:{self.rerank_k}" if self.rerank and self.rerank_k else self.rerank or NONE

    def _expansion(self, name: str) -> str:
        weights = dict(self.expand_weights)
        # repr, not :g, so the line records the weight that runs, every digit of it (and 0, not -0)
        return f"{name}:{repr(weights[name] + 0.0).removesuffix('.0')}" if name in weights else name


def _expansions(value: str) -> dict[str, object]:
    """`expand`'s value (METHOD or METHOD:W, comma-separated) as the model's two fields."""
    names: list[str] = []
    weights: list[tuple[str, float]] = []
    for item in (v for v in value.split(",") if v):
        name, sep, written = item.partition(":")
        if not name:
            raise MhgraphError(f"stage 'expand': '{item}': write METHOD or METHOD:W")
        names.append(name)
        if sep:
            try:
                weight = float(written)
            except ValueError:
                raise MhgraphError(f"stage 'expand': the weight of {name} must be a number, got '{written}'") from None
            if not 0.0 <= weight <= 1.0:     # NaN too
                raise MhgraphError(f"stage 'expand': the weight of {name} must be from 0 to 1, got '{written}'")
            weights.append((name, weight))
    return {"expand": tuple(names), "expand_weights": tuple(weights)}


def _filter(value: str) -> dict[str, object]:
    """`filter`'s value (EXTRACTOR or EXTRACTOR:drop-words) as the model's two fields."""
    name, sep, words = value.partition(":")
    if not sep:
        return {"filter": name}
    if words != DROP_WORDS:
        raise MhgraphError(f"stage 'filter': write EXTRACTOR or EXTRACTOR:{DROP_WORDS}, got '{value}'")
    # none:drop-words (or :drop-words) is no filter: the model says the words need an extractor
    return {"filter": None if name in ("", NONE) else name, "filter_words": "drop"}


def _candidates(value: str) -> dict[str, object]:
    """`candidates`' value (KIND or hybrid:N) as the model's two fields."""
    kind, sep, depth = value.partition(":")
    if not sep:
        return {"candidates": kind}
    if kind != "hybrid":     # an unknown kind: the model's own message
        if kind in ("vector", "bm25"):
            raise MhgraphError(f"stage 'candidates': {ONLY_HYBRID.format(kind=kind)}")
        return {"candidates": kind}
    if not (depth.isascii() and depth.isdigit()):
        raise MhgraphError(f"stage 'candidates': the depth of hybrid must be a whole number, got '{depth}'")
    return {"candidates": kind, "depth": int(depth)}


def _reranker(value: str) -> dict[str, object]:
    """`rerank`'s value (RERANKER or RERANKER:N) as the model's two fields. A reranker's own name
    may hold colons (kfold:DIR), so only a last part of ASCII digits is N."""
    name, sep, scored = value.rpartition(":")
    if not (sep and scored.isascii() and scored.isdigit()):
        return {"rerank": value}
    if not name or name == NONE:
        raise MhgraphError(f"stage 'rerank': {ONLY_RERANK}")
    # kfold:30 is kfold without its folder, not a folder scoring 30
    needs = {KFOLD: ("folder", "DIR"), BI_ENCODER: ("model", "MODEL"), SENTENCES: ("model", "MODEL")}.get(f"{name}:")
    if needs:
        raise MhgraphError(f"stage 'rerank': {name} needs its {needs[0]}: write rerank={name}:{needs[1]}:N (one "
                           f"named by digits alone: {name}:./{scored})")
    return {"rerank": name, "rerank_k": int(scored)}


def parse_stages(text: str) -> PipelineStages:
    """`text` as stages; a one-line error naming the stage or value at fault."""
    values: dict[str, object] = {}
    for token in text.split():
        stage, sep, value = token.partition("=")
        if not sep or not value:
            raise MhgraphError(f"stage '{token}': write STAGE=VALUE (stages: {', '.join(STAGES)})")
        if stage not in STAGES:
            raise MhgraphError(f"unknown stage '{stage}' (stages: {', '.join(STAGES)})")
        if stage in values:
            raise MhgraphError(f"stage '{stage}' given twice")
        if value == NONE:
            values[stage] = () if stage == "expand" else None
        elif stage == "expand":
            values.update(_expansions(value))
        elif stage == "filter":
            values.update(_filter(value))
        elif stage == "candidates":
            values.update(_candidates(value))
        elif stage == "rerank":
            values.update(_reranker(value))
        else:
            values[stage] = value
    try:
        return PipelineStages(**values)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = str(error["loc"][0]) if error["loc"] else "?"
        stage = {"expand_weights": "expand", "depth": "candidates", "rerank_k": "rerank",
                 "filter_words": "filter"}.get(field, field)
        message = error["msg"]
        if message.startswith("Value error, "):
            raise MhgraphError(f"stage '{stage}': {message.removeprefix('Value error, ')}") from None
        raise MhgraphError(f"stage '{stage}': {message}, got {error.get('input')!r}") from None

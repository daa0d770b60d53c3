"""`compose`: methods as stages of one pipeline (mhgraph/compose/stages.py):

    filter -> candidates -> expansion -> fusion -> rerank -> balance -> diversify

1. candidates: `candidate_k` chunks by vector, bm25 or hybrid (without an expansion, at least
   the N of `rerank=RERANKER:N` or `rerank_k`: a reranker told to score 50 reads 50 candidates);
   with a filter, metarag's filtered search (its extractor, vector or hybrid inside the filter),
   with share=source each source the filter names searched apart for its share. On a corpus
   whose chunks have no source and no date the filter is skipped, with a note.
2. expansion: each method named ranks `expand_k` chunks of its own, told the candidates (a
   method that can use them does: ppr seeds its walk with them; the others search from the
   question). A method whose layer is missing says which command builds it, before anything runs.
3. fusion: the candidates and the expansions' rankings fused (reciprocal rank or linear), each
   expansion's ranking weighted against the candidates' 1: the weight written in the stages line
   (`expand=ircot:0.5`), else `expand_weight`.
4. rerank: the reranker scores the best N fused chunks (`rerank=RERANKER:N`, else `rerank_k`, else
   20) and keeps `top_k`; without one, the best `top_k` fused chunks are kept. Its scores meet the
   pipeline's by `rerank_fusion`: scores (each standardised, the reranker at `rerank_weight`) or
   ranks (reciprocal rank fusion of each reranker's ranking with the candidates' and each
   expansion's, the rerankers together at `rerank_weight` of the whole).
5. balance (when set): the `top_k` kept taken from each source (or document) in turn, from the
   reranked (or fused) order; by source only where the question's filter names two or more
   sources (a question that names none or one keeps its order);
6. diversify (when set): at most N chunks of one document among the `top_k` kept, from the
   reranked (or fused, or balanced) order; the chunks past a document's limit move below the others.

Each stage is timed (RetrievalResult.phases) and its output kept (StageTrace), so an evaluation
report shows where gold is lost; the rerank stage also keeps the scores it ordered by (each
scored chunk's fused score and each reranker's own). The stages' own methods are built with their options as the
configuration sets them (flags, environment, config file), and their diagnostics are kept too.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, Literal

import neo4j
from pydantic import model_validator

from mhgraph import cypher
from mhgraph.compose.diagnostics import StageTrace
from mhgraph.compose.diversity import in_turn, per_document
from mhgraph.compose.fusion import by_ranks, fuse
from mhgraph.compose.stages import DROP_WORDS, PipelineStages, parse_stages
from mhgraph.errors import MhgraphError
from mhgraph.filters.diagnostics import FilterExtraction
from mhgraph.options import MethodOptions, option
from mhgraph.rerank.base import Reranker, fusion_weight, ordered, score_chunks
from mhgraph.rerank.models import RERANK_FOCUS_HELP, RERANK_TOKENS_HELP, load_reranker, warn_of_training
from mhgraph.rerank.precision import RERANK_PRECISION_HELP, Precision
from mhgraph.retrieval import registry
from mhgraph.retrieval.base import Retriever
from mhgraph.retrieval.registry import BuildContext, MethodSpec
from mhgraph.types import Hop, RetrievalResult, RetrievedChunk

DEFAULT_STAGES = "candidates=hybrid expand=ppr fuse=rrf"
# pipelines shipped by name, each chosen 5-fold by question on MultiHop-RAG's development split
# (docs/methods/compose.md): training-free among the training-free pipelines that may ship (no
# stage that calls a language model when one is configured; compose-stored-multihop-rag.md: its
# reranker over 50 candidates, the sentences prepared with 'mhgraph reranker prepare');
# training-free-fast, the same search without its reranker, the best of those without one
# (compose-stored-multihop-rag.md: p50 76 ms against 102 prepared; unprepared, over 30
# candidates, 159, where the reranker meets chunks it has not scored yet); in-domain among the in-domain ones: the
# cross-encoder trained on the corpus's own questions ('mhgraph reranker train --negatives 8
# --max-length 128', then 'mhgraph reranker export models/reranker --out models/reranker-onnx
# --max-length 128'; compose-weights-reranker-multihop-rag-kfold-128-neg8-multihop-rag.md), k-fold,
# combined with the sentence reranker (compose-combined-multihop-rag.md), TreeHop trained there
# too as the expansion ('mhgraph treehop train', named by --treehop-model;
# compose-treehop-multihop-rag.md), the rerankers scoring every fused chunk (50 candidates and
# TreeHop's 20) and their rankings fused with the pipeline's by rank (PRESET_OPTIONS;
# compose-weights-multihop-rag.md)
SEARCH = "filter=rules:drop-words share=source candidates=hybrid:200"
SENTENCE_RERANKER = "sentences:all-MiniLM-L6-v2"
IN_DOMAIN_RERANKER = "kfold:models/reranker-onnx"
RERANK_K = 20          # the fused chunks a reranker scores when neither the line nor rerank_k says
PRESETS: dict[str, str] = {"training-free": f"{SEARCH} rerank={SENTENCE_RERANKER}:50",
                           "training-free-fast": SEARCH,
                           "in-domain": f"{SEARCH} expand=treehop rerank={IN_DOMAIN_RERANKER}+{SENTENCE_RERANKER}:70"}
# what a shipped pipeline sets beside its line, each unless set otherwise (a flag, the environment,
# the config file): the in-domain preset's pool (50 candidates, TreeHop's 20) and its rank fusion
# were chosen k-fold by question from one run's trace (compose-weights-multihop-rag.md)
PRESET_OPTIONS: dict[str, dict[str, Any]] = {
    "in-domain": {"candidate_k": 50, "expand_k": 20, "rerank_fusion": "ranks"}}
RERANK_RRF_K = 5       # rank fusion's k: small, so that each ranking's first places count most
RANKS_SHARE = 0.5      # the rerankers' share of a rank fusion when rerank_weight is unset


class ComposedRetriever(Retriever):
    name = "compose"

    def __init__(self, stages: PipelineStages, candidates: Retriever, expansions: dict[str, Retriever], *,
                 candidate_k: int = 30, expand_k: int = 10, expand_weight: float = 1.0,
                 reranker: Reranker | None = None, rerank_k: int = RERANK_K, rerank_weight: float = 1.0,
                 rerank_fusion: Literal["scores", "ranks"] = "scores", rerank_rrf_k: int = RERANK_RRF_K,
                 note: str | None = None) -> None:
        self.stages = stages
        self.candidates = candidates
        self.expansions = expansions
        self.candidate_k = candidate_k
        self.expand_k = expand_k
        self.expand_weight = expand_weight
        self.reranker = reranker
        self.rerank_k = rerank_k
        self.rerank_weight = rerank_weight
        self.rerank_fusion = rerank_fusion
        self.rerank_rrf_k = rerank_rrf_k
        self.note = note

    @property
    def params(self) -> dict[str, Any]:
        training = self._reranker_training
        return {"corpus": self.candidates.params.get("corpus"), "stages": self.stages.describe(),
                "candidate_k": self.candidate_k, "expand_k": self.expand_k,
                **({"expand_weight": self.expand_weight}
                   if self.expand_weight != 1 and set(self.expansions) - set(dict(self.stages.expand_weights)) else {}),
                "rerank_k": self.rerank_k,
                "rerank_weight": self.rerank_weight,
                **({"rerank_fusion": "ranks", "rerank_rrf_k": self.rerank_rrf_k}
                   if self.reranker and self.rerank_fusion == "ranks" else {}),
                "candidates": self.candidates.params,
                **{f"expand_{name}": r.params for name, r in self.expansions.items()},
                **({"reranker": self.reranker.name} if self.reranker else {}),
                **({"reranker_training": training} if training else {}),
                **({"note": self.note} if self.note else {})}

    @property
    def _reranker_training(self) -> dict[str, Any] | None:
        """Where the reranker learned, when it records it: in-domain when on this corpus's questions."""
        corpus = (getattr(self.reranker, "corpus_facts", None) or {}).get("corpus")
        return {"corpus": corpus, "in_domain_trained": corpus == self.candidates.params.get("corpus")} if corpus else None

    def trained_models(self):
        own = (self.reranker,) if hasattr(self.reranker, "saw") else ()
        return [*own, *(m for r in (self.candidates, *self.expansions.values()) for m in r.trained_models())]

    def search(self, question: str, *, top_k: int = 10, **options: Any) -> RetrievalResult:
        started = time.perf_counter()
        trace: list[dict[str, Any]] = []
        phases: dict[str, float] = {}
        diagnostics: list[Any] = []

        def record(stage: str, detail: str, seconds: float, chunks: list[RetrievedChunk]) -> None:
            trace.append({"stage": stage, "detail": detail, "seconds": round(seconds, 5),
                          "chunks": [c.chunk_id for c in chunks]})
            phases[stage] = phases.get(stage, 0.0) + seconds

        t = time.perf_counter()
        found = self.candidates.search(question, top_k=self.candidate_k)
        candidates = found.final_ranking()[:self.candidate_k]
        diagnostics += found.diagnostics
        record("candidates", self._candidate_detail(), time.perf_counter() - t, candidates)
        rankings = [candidates]
        pool = {c.chunk_id: c for c in candidates}
        for name, retriever in self.expansions.items():
            t = time.perf_counter()
            result = retriever.search(question, top_k=self.expand_k, candidates=candidates)
            ranking = result.final_ranking()[:self.expand_k]
            diagnostics += result.diagnostics
            rankings.append(ranking)
            for c in ranking:
                pool.setdefault(c.chunk_id, c)
            record(f"expand:{name}", f"{name}, {self.expand_k} chunks", time.perf_counter() - t, ranking)
        if self.expansions:
            trace.append({"stage": "expanded", "detail": "candidates and expansions together", "seconds": 0.0,
                          "chunks": list(pool)})
        t = time.perf_counter()
        weights = [1.0] + [self.stages.weight(name, self.expand_weight) for name in self.expansions]
        fused = fuse(rankings, self.stages.fuse, weights) if self.expansions else candidates
        limit, balance = self.stages.diversify, self.stages.balance
        spread = bool(limit or balance)        # a stage after the ordering reads more than top_k
        depth = self.rerank_k if self.reranker else len(fused) if spread else top_k   # what the next stage sees
        seen = "all" if spread and not self.reranker else f"top {depth}"   # one detail for every question
        record("fusion", f"{self.stages.fuse if self.expansions else 'none (one ranking)'}, {seen}",
               time.perf_counter() - t, fused[:depth])
        if self.reranker is not None:
            # with balance or diversify, the reranker orders all it scores, and the stage after it keeps top_k
            keep = self.rerank_k if spread else top_k
            scored = fused[:self.rerank_k]
            scores = score_chunks(self.reranker, question, scored)
            if self.rerank_fusion == "ranks":
                final = by_ranks(scored, scores.by_reranker, rankings, weights, self.rerank_weight,
                                 self.rerank_rrf_k, keep)
                how = f", fused by ranks (k {self.rerank_rrf_k})"
            else:
                final, how = ordered(scored, scores.scores, keep, self.rerank_weight), ""
            record("rerank", f"{self.reranker.name}, {self.rerank_k} -> {keep}{how}", scores.seconds, final)
            trace[-1]["scores"] = _scores(scored, scores.by_reranker)
        else:
            final = [replace(c, rank=rank) for rank, c in enumerate(fused[:depth], start=1)]
        if balance:
            t = time.perf_counter()
            keep = len(final) if limit else top_k
            # by source only for a question that names several: one that names none keeps its order
            final = (in_turn(final, balance, keep) if balance == "document" or len(self._named(found)) >= 2
                     else final[:keep])
            where = "" if balance == "document" else " where the filter names two or more"
            record("balance", f"each {balance} in turn{where}" + ("" if limit else f", top {top_k}"),
                   time.perf_counter() - t, final)
        if limit:
            t = time.perf_counter()
            final = per_document(final, limit, top_k)
            record("diversify", f"at most {limit} per document, top {top_k}", time.perf_counter() - t, final)
        seconds = time.perf_counter() - started
        stage_trace = StageTrace(self.stages.describe(), tuple(trace), self.note)
        # the filter the candidates were searched under (metarag's, as its own trace shows it)
        filters = found.hops[0].filters if found.hops else None
        return RetrievalResult(question, self.name, [Hop(1, final, query=question, filters=filters, seconds=seconds)],
                               params={"top_k": top_k, **self.params}, seconds=seconds, phases=phases,
                               diagnostics=(stage_trace, *self._distinct(diagnostics)))

    @staticmethod
    def _named(found: RetrievalResult) -> tuple[str, ...]:
        """The sources the question's filter named, as the candidates stage used it (none unfiltered)."""
        extraction = found.diagnostic(FilterExtraction)
        return extraction.filter.sources if extraction and not extraction.fallback else ()

    def _candidate_detail(self) -> str:
        where = f" inside the {self.stages.filter} filter" if self.stages.filter and not self.note else ""
        where += ", each source it names apart" if where and self.stages.share else ""
        where += ", its words left out of the BM25 query" if where and self.stages.filter_words == "drop" else ""
        depth = f" (fused {self.stages.depth} deep)" if self.stages.depth else ""
        return f"{self.stages.candidates}{depth}{where}, {self.candidate_k} chunks"

    @staticmethod
    def _distinct(diagnostics: list[Any]) -> list[Any]:
        """One record per kind (a result holds at most one of each)."""
        seen: dict[str, Any] = {}
        for d in diagnostics:
            seen.setdefault(d.kind, d)
        return list(seen.values())


class ComposeOptions(MethodOptions):
    stages: str = option(DEFAULT_STAGES, "The pipeline: STAGE=VALUE for filter (a metarag extractor; "
                                         "EXTRACTOR:drop-words leaves the words naming its sources and dates out "
                                         "of the BM25 query), share (source: "
                                         "each source the filter names searched apart for its share of the "
                                         "candidates), candidates (vector, bm25, hybrid; hybrid:N fuses N deep), "
                                         "expand (methods, comma-separated; METHOD:W gives one its fusion weight "
                                         "W), fuse (rrf, linear), rerank (a reranker; RERANKER:N has it score "
                                         "the best N fused chunks), "
                                         "balance (source or document: the kept chunks taken from each in turn), "
                                         "diversify (N: at most N chunks of one document kept); 'none' turns a "
                                         "stage off. Or the name of a pipeline: one of `pipelines`, or shipped ("
                                         + ", ".join(PRESETS) + ").",
                         flag="--stages")
    pipelines: dict[str, str] = option({}, "Named pipelines, NAME = a stages line; '--stages NAME' runs one "
                                           "(a name shipped with mhgraph is replaced).")
    candidate_k: int = option(30, "Chunks the candidates stage passes on (without an expansion, at least "
                                  "the N the stages line or rerank_k gives the reranker).", ge=1)
    expand_k: int = option(10, "Chunks each expansion method ranks.", ge=1)
    expand_weight: float = option(1.0, "Each expansion's ranking's weight in the fusion, the candidates' being 1 "
                                       "(below 1, the expansions add chunks more than they reorder the "
                                       "candidates); a method written METHOD:W in the stages has its own.",
                                  ge=0.0, le=1.0)
    rerank_k: int | None = option(None, f"Fused chunks the reranker scores (it keeps -k; default {RERANK_K}). The "
                                        "stages line's rerank=RERANKER:N says it there; a value set here that "
                                        "differs from the line's N is an error.", ge=1)
    rerank_weight: float | None = option(None, "The reranker's weight fused with the fused score, each "
                                              "standardised (1: the reranker's order alone; default: the "
                                              "reranker's own, as an exported one records it, 0.7 for "
                                              "sentences:MODEL, the mean of its parts' for A+B, else 1; under "
                                              "rerank_fusion=ranks, the rerankers' share of the rank fusion, "
                                              f"{RANKS_SHARE} unless set).",
                                         ge=0.0, le=1.0)
    rerank_fusion: Literal["scores", "ranks"] = option(
        "scores", "How the reranker's scores meet the pipeline's: scores (each standardised, the reranker at "
                  "rerank_weight) or ranks (reciprocal rank fusion of each reranker's ranking with the "
                  "candidates' and each expansion's, the rerankers together at rerank_weight of the whole).")
    rerank_rrf_k: int = option(RERANK_RRF_K, "The k of rank fusion (1 / (k + rank)) under rerank_fusion=ranks: "
                                             "small, each ranking's first places count most.", ge=1)
    rerank_tokens: int | None = option(None, RERANK_TOKENS_HELP, flag="--rerank-tokens", ge=16)
    rerank_focus: bool = option(False, RERANK_FOCUS_HELP, flag="--rerank-focus")
    rerank_precision: Precision = option("auto", RERANK_PRECISION_HELP, flag="--rerank-precision")

    @model_validator(mode="after")
    def _parses(self) -> ComposeOptions:
        if not self.stages.strip():   # not every stage's own default: that is not the option's default
            raise MhgraphError(f"an empty stages line: write STAGE=VALUE pairs or a pipeline's name, or leave it "
                               f"out for the default ({DEFAULT_STAGES})")
        for name, line in self.pipelines.items():
            if "=" not in line:
                raise MhgraphError(f"pipeline '{name}': write its stages as STAGE=VALUE, not another name")
        _ = self.pipeline   # a one-line MhgraphError naming the pipeline or the stage at fault
        return self

    @property
    def stages_line(self) -> str:
        """The stages that run: `stages` itself, or the line of the pipeline it names."""
        text = self.stages.strip()
        if "=" in text:   # an empty line is refused when the options are made (_parses)
            return text
        named = {**PRESETS, **self.pipelines}
        if text not in named:
            raise MhgraphError(f"unknown pipeline '{text}' (named: {', '.join(sorted(named)) or 'none'}; or write "
                               "its stages as STAGE=VALUE)")
        return named[text]

    @property
    def pipeline(self) -> PipelineStages:
        return parse_stages(self.stages_line)

    def own_defaults(self) -> dict[str, tuple[Any, str]]:
        """What the shipped pipeline `stages` names sets beside its line (PRESET_OPTIONS), where no
        flag, environment variable or config file set it; a pipeline the config file names takes
        the preset's place, and its options with it."""
        name = self.stages.strip()
        if name in self.pipelines:
            return {}
        return {k: (v, f"preset {name}") for k, v in PRESET_OPTIONS.get(name, {}).items()
                if k not in self.model_fields_set}

    def with_preset(self) -> ComposeOptions:
        """These options with own_defaults() applied."""
        unset = {k: v for k, (v, _) in self.own_defaults().items()}
        return self.model_copy(update=unset) if unset else self


def _has_metadata(ctx: BuildContext) -> bool:
    g = ctx.graph
    records, _, _ = g.driver.execute_query(cypher.load("corpora/metadata_present"), corpus=g.corpus,
                                           database_=g.database, routing_=neo4j.RoutingControl.READ)
    return bool(records and records[0]["present"])


def build(ctx: BuildContext, options: ComposeOptions) -> ComposedRetriever:
    options = options.with_preset()
    stages = options.pipeline
    candidate_k, rerank_k = _depths(stages, options)     # a conflict is one line before any model loads
    g, settings = ctx.graph, ctx.settings
    note = None
    if stages.filter and not _has_metadata(ctx):
        note = "filter skipped: the corpus's chunks have no source and no date"
    components = {"embedder": ctx.embedder, "llm": ctx.llm, "questions": ctx.questions, "status": ctx.status}
    # every stage's requirements first, so a missing layer is one line before any model loads
    for name in stages.expand:
        registry.check_ready(name, g, registry.options_for(settings, name))
    if stages.filter and not note:
        if stages.candidates == "bm25":
            raise MhgraphError("stage 'filter': the filtered search takes vector or hybrid candidates, not bm25")
        metarag = registry.options_for(settings, "metarag")
        _same_depth(stages, metarag.hybrid_depth if stages.candidates == "hybrid" else None)
        _same_words(stages, metarag.filter_words if stages.candidates == "hybrid" else "keep")
        # the line's, over metarag's configured options (the depth and the words checked against it above)
        metarag = metarag.model_copy(update={
            "filter_extractor": stages.filter, "search": stages.candidates, "candidates": candidate_k,
            "per_source": stages.share == "source", "hybrid_depth": stages.depth,
            "filter_words": stages.filter_words, "rerank": False})
        candidates = registry.build_retriever("metarag", g, settings, metarag, **components)
    else:
        own = registry.options_for(settings, stages.candidates)
        if stages.candidates == "hybrid":
            _same_depth(stages, own.depth)
            own = own.model_copy(update={"depth": stages.depth})
        candidates = registry.build_retriever(stages.candidates, g, settings, own, **components)
    expansions = {name: registry.build_retriever(name, g, settings, _expansion_options(settings, name, stages),
                                                 **components) for name in stages.expand}
    reranker = None
    if stages.rerank:
        ctx.status(f"loading reranker {stages.rerank}")
        reranker = load_reranker(stages.rerank, settings.cache_dir, max_length=options.rerank_tokens,
                                 focus=options.rerank_focus, precision=options.rerank_precision)
        warn_of_training(reranker, stages.rerank, g.driver, g.database, g.corpus)
    return ComposedRetriever(stages, candidates, expansions, candidate_k=candidate_k,
                             expand_k=options.expand_k, expand_weight=options.expand_weight, reranker=reranker,
                             rerank_k=rerank_k, rerank_weight=rerank_weight(reranker, options),
                             rerank_fusion=options.rerank_fusion, rerank_rrf_k=options.rerank_rrf_k, note=note)


def _scores(scored: list[RetrievedChunk], by_reranker: dict[str, list[float]]) -> dict[str, Any]:
    """The rerank stage's inputs, for its trace: each chunk it scored with its fused (search)
    score and each reranker's own, so a user sees why a chunk was kept or dropped and can
    weigh the parts again without scoring anew (bench/compose_weights.py)."""
    return {"chunks": [c.chunk_id for c in scored], "search": [round(c.score, 6) for c in scored],
            "rerankers": {name: [round(float(v), 5) for v in values] for name, values in by_reranker.items()}}


def rerank_weight(reranker: Reranker | None, options: ComposeOptions) -> float:
    """The weight the rerank stage fuses at: the one set; unset, the reranker's own score-fusion
    weight (fusion_weight) when fusing by scores, RANKS_SHARE when by ranks (a weight chosen for
    standardised scores says nothing of a share of ranks)."""
    if options.rerank_weight is None and options.rerank_fusion == "ranks":
        return RANKS_SHARE
    return fusion_weight(reranker, options.rerank_weight)


def _expansion_options(settings: Any, name: str, stages: PipelineStages) -> Any:
    """An expansion's configured options; one that reads the question's sources and dates (its
    options have a filter_extractor) reads them as the line's filter stage does, with the rules
    where the line has none, so that the line says what runs and what calls a language model."""
    own = registry.options_for(settings, name)
    if "filter_extractor" in type(own).model_fields:
        own = own.model_copy(update={"filter_extractor": stages.filter or "rules"})
    return own


def _same_depth(stages: PipelineStages, configured: int | None) -> None:
    """The line says how deep the hybrid search fuses, so that it records what runs: a depth set
    elsewhere (--hybrid-depth, the environment, the config file) that differs is a one-line error."""
    if configured is not None and configured != stages.depth:
        written = f"hybrid:{stages.depth}" if stages.depth else "hybrid"
        raise MhgraphError(f"stage 'candidates': the line says {written}, but a hybrid depth of {configured} is "
                           f"configured: write candidates=hybrid:{configured}, or unset it")


def _same_words(stages: PipelineStages, configured: str) -> None:
    """The line says whether the filter's words leave the BM25 query, as it says a depth: metarag's
    filter_words set to drop elsewhere (--filter-words, the config file) under a line that keeps
    them is a one-line error, not a setting silently ignored."""
    if configured == "drop" and stages.filter_words != "drop":
        raise MhgraphError(f"stage 'filter': the line keeps the filter's words in the BM25 query, but metarag's "
                           f"filter_words is configured as drop: write filter={stages.filter}:{DROP_WORDS}, "
                           "or unset it")


def _depths(stages: PipelineStages, options: ComposeOptions) -> tuple[int, int]:
    """(candidate_k, rerank_k). The reranker scores the line's RERANKER:N, else rerank_k, else
    RERANK_K fused chunks; a configured rerank_k that differs from the line's N is a one-line error,
    as a depth is. Without an expansion the candidates are all the reranker can score: told to score
    N (the line's or rerank_k, not the default), it gets at least N of them."""
    configured = options.rerank_k
    if stages.rerank_k and configured is not None and configured != stages.rerank_k:
        raise MhgraphError(f"stage 'rerank': the line says {stages.rerank}:{stages.rerank_k}, but rerank_k "
                           f"{configured} is configured: write rerank={stages.rerank}:{configured}, or unset it")
    told = stages.rerank_k or configured
    candidate_k = options.candidate_k
    if stages.rerank and told and not stages.expand:
        candidate_k = max(candidate_k, told)
    return candidate_k, told or RERANK_K


def _uses_llm(options: ComposeOptions) -> bool:
    stages = options.pipeline
    if stages.filter == "llm":
        return True
    return any(registry.get(name).calls_llm(registry.get(name).options()) for name in stages.expand)


def _indexes(options: ComposeOptions) -> tuple[str, ...]:
    """The indexes of the candidates stage's method, as its own spec declares them."""
    spec = registry.get(options.pipeline.candidates)
    return spec.needed_indexes(spec.options())


def _reads(options: ComposeOptions) -> tuple[str, ...]:
    """The methods whose options the pipeline reads (build): the filtered search's (metarag) under a
    filter, the candidates stage's (also under a filter, on a corpus without metadata), each
    expansion's."""
    stages = options.with_preset().pipeline
    return (*(("metarag",) if stages.filter else ()), stages.candidates, *stages.expand)


# metarag's options the filtered search takes from the line (build), or leaves unused (its own
# reranker: the line's rerank stage reranks)
FILTERED_SEARCH_SETS = ("filter_extractor", "search", "candidates", "per_source", "rerank", "reranker",
                        "rerank_weight")


def _overrides(options: ComposeOptions) -> tuple[str, ...]:
    """The options of the methods the pipeline reads that it sets from its line (build,
    _expansion_options): a flag setting only these changes nothing."""
    stages = options.with_preset().pipeline
    # an expansion by metarag reads those options as configured: only its extractor is the line's
    filtered = stages.filter and "metarag" not in stages.expand
    out = [f"metarag.{name}" for name in FILTERED_SEARCH_SETS] if filtered else []
    return (*out, *(f"{name}.filter_extractor" for name in stages.expand
                    if "filter_extractor" in registry.get(name).options.model_fields))


def _held_out() -> frozenset[str]:
    """Questions any method that may be a stage shows as demonstrations: left out of every figure."""
    return frozenset().union(*(registry.held_out(n) for n in registry.names() if n != "compose"
                               and registry.get(n).demonstrated))


METHOD = MethodSpec(
    name="compose", description="methods as stages of one pipeline: filter, share, candidates, expansion, fusion, "
                                "rerank, balance, diversify",
    options=ComposeOptions, build=build, indexes=_indexes, embedder=True, uses_llm=_uses_llm, held_out=_held_out,
    diagnostics=(StageTrace,), reads=_reads, overrides=_overrides)

"""`mhgraph eval`: run a retrieval method over benchmark questions, score it, report, trace.

Steps: load questions -> read the graph's chunks and map every evidence fact to its gold chunks
-> run the method per question (optionally on several threads) -> score (hop-conditioned P/R/F1,
ranking metrics, Recall@K, difficulty) -> write results.json, summary.json, report.md and plots
into the run directory -> store the run's evidence paths in Neo4j.
"""

from __future__ import annotations

import json
import re
import shutil
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence, TypeVar

import neo4j
import numpy as np
from tqdm import tqdm

from mhgraph import cypher
from mhgraph.answer import Answer, build_reader
from mhgraph.benchmark import load_questions
from mhgraph.config import Settings
from mhgraph.embeddings import TextEmbedder
from mhgraph.errors import MhgraphError
from mhgraph.eval import official, traces
from mhgraph.eval.answers import score_answer, summarise_answers
from mhgraph.eval.difficulty import LAMBDA, difficulties, report_edges
from mhgraph.eval.gold import (
    ChunkRef,
    CoverageReport,
    DocumentRef,
    GoldMatcher,
    coverage_report,
)
from mhgraph.eval.metrics import RECALL_AT, score_results
from mhgraph.eval.ray_engine import search_on_ray
from mhgraph.eval.report import question_rows, run_label, summarise, write_report
from mhgraph.graph.context import GraphContext
from mhgraph.graph.schema import corpus_chunking, corpus_embed_header
from mhgraph.llm import LLM, Usage, load_llm
from mhgraph.retrieval import registry
from mhgraph.retrieval.base import Retriever
from mhgraph.types import Diagnostics, Question, RetrievalResult, RunContext

T = TypeVar("T")

RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+=,:@-]{0,199}")


@dataclass
class EvalOptions:
    method: str
    questions_path: Path
    top_k: int = 10
    limit: int | None = None
    per_type: int | None = None      # the first N questions of each type: a stratified slice
    types: Sequence[str] | None = None
    workers: int = 1                 # threads (engine "local") or Ray actors (engine "ray")
    engine: str = "local"            # mhgraph.engine.ENGINES
    address: str | None = None       # the Ray cluster (engine "ray"; None: RAY_ADDRESS, else a Ray started here)
    trace: bool = True
    runs_dir: Path = Path("runs")
    run_id: str | None = None
    recall_at: Sequence[int] = RECALL_AT
    progress: bool = True
    extra: dict[str, Any] = field(default_factory=dict)
    # ours | official | both: which scoring the report shows. Ours is always computed (gold
    # flags, hop metrics, traces and --compare rest on it); the official rule only when asked.
    scoring: str = "both"
    # Answers: read the top answer_k chunks (default top_k) of each final ranking with the
    # configured LLM (or the offline strategy) and score them; llm_cache=False bypasses the cache.
    answer: bool = False
    answer_k: int | None = None
    llm_cache: bool = True
    # lambda of the MHTS difficulty D = h - lambda * s (1 as published; `mhgraph runs calibrate` fits one)
    similarity_weight: float = LAMBDA

    def __post_init__(self) -> None:
        # a run's name is a folder under runs_dir and a stored id: nothing that leaves the folder
        if self.run_id is not None and not RUN_ID.fullmatch(self.run_id):
            raise MhgraphError(f"run id {self.run_id!r}: use 1-200 letters, digits and . _ + = , : @ - "
                               "(no '/'), starting with a letter or digit")
        if self.answer_k is not None and not self.answer:
            raise MhgraphError("answer_k (--answer-k) is read only when the run answers (--answer)")

    @property
    def params(self) -> dict[str, Any]:
        return {"top_k": self.top_k, **self.extra}


@dataclass
class EvalRun:
    run_id: str
    run_dir: Path
    summary: dict[str, Any]
    coverage: CoverageReport
    files: dict[str, str]


def gold_matcher(driver: neo4j.Driver, database: str | None, corpus: str) -> GoldMatcher:
    """The gold rule over the chunks of one corpus."""
    records, _, _ = driver.execute_query(cypher.load("eval/chunks"), corpus=corpus, database_=database,
                                         routing_=neo4j.RoutingControl.READ)
    if not records:
        raise MhgraphError(f"corpus '{corpus}' has no chunks: run 'mhgraph ingest' on the benchmark corpus first")
    chunks = [ChunkRef(r["chunk_id"], r["document_id"], r["start_char"], r["end_char"], r["text"], r["index"])
              for r in records]
    documents = {r["document_id"]: DocumentRef(r["document_id"], r["title"]) for r in records}
    return GoldMatcher(chunks, documents.values())


def chunk_embeddings(driver: neo4j.Driver, database: str | None, ids: Sequence[str]) -> dict[str, list[float]]:
    records, _, _ = driver.execute_query(cypher.load("eval/chunk_embeddings"), ids=list(ids), database_=database,
                                         routing_=neo4j.RoutingControl.READ)
    return {r["chunk_id"]: r["embedding"] for r in records}


def _per_question(work: Callable[[Question], T], questions: Sequence[Question], options: EvalOptions,
                  desc: str) -> dict[str, T]:
    """work(q) for every question on options.workers threads, by question id, with a progress bar."""
    done: dict[str, T] = {}
    with tqdm(total=len(questions), desc=desc, unit="q", disable=not options.progress) as bar, \
            ThreadPoolExecutor(max_workers=max(1, options.workers)) as pool:
        for q, result in zip(questions, pool.map(work, questions)):  # results come back in question order
            done[q.id] = result
            bar.update()
    return done


def _run_all(retriever, questions: Sequence[Question], options: EvalOptions) -> dict[str, RetrievalResult]:
    return _per_question(lambda q: retriever.search(q.query, top_k=options.top_k), questions, options,
                         f"eval {options.method}")


def _answer_all(llm: LLM | None, questions: Sequence[Question], results: dict[str, RetrievalResult],
                options: EvalOptions) -> tuple[dict[str, Answer], dict[str, dict[str, Any]], dict[str, Any]]:
    reader = build_reader(llm)
    k = options.answer_k or options.top_k
    answers = _per_question(lambda q: reader.answer(q.query, results[q.id].final_ranking()[:k]), questions, options,
                            f"answer ({reader.label})")
    scores = {q.id: score_answer(q, answers[q.id]) for q in questions}
    summary = summarise_answers(questions, answers, scores, reader=reader.label, top_k=k,
                                usage=llm.usage.as_dict() if llm else None)
    return answers, scores, summary


def _result_json(q: Question, result: RetrievalResult, gold: Sequence[str]) -> dict[str, Any]:
    wanted = set(gold)
    return {
        "id": q.id, "query": q.query, "type": q.question_type, "answer": q.answer, "gold": list(gold),
        "seconds": result.seconds, "params": result.params,
        **({"phases": result.phases} if result.phases else {}),
        **{k: v for d in result.diagnostics for k, v in d.to_json().items()},
        "hops": [{"hop": h.index, "query": h.query, "filters": h.filters, "seconds": h.seconds,
                  "chunks": [{"chunk_id": c.chunk_id, "rank": c.rank, "score": c.score, "title": c.title,
                              "source": c.source, "parent_id": c.parent_id, "gold": c.chunk_id in wanted}
                             for c in h.chunks]} for h in result.hops],
    }


def _official_json(scores: dict[str, official.OfficialScore | None] | None, question_id: str) -> dict[str, Any]:
    """The question's `official` entry for results.json: {} when not scored, None for a null question."""
    if scores is None:
        return {}
    score = scores[question_id]
    return {"official": score.to_json() if score is not None else None}


def phase_latency(results: Iterable[RetrievalResult]) -> dict[str, dict[str, float]]:
    """p50, p95 and mean milliseconds of each named step (filter, search, rerank), where the
    method reports its steps apart."""
    by_phase: dict[str, list[float]] = {}
    for r in results:
        for phase, seconds in r.phases.items():
            by_phase.setdefault(phase, []).append(seconds * 1000.0)
    return {phase: {"p50": float(np.percentile(ms, 50)), "p95": float(np.percentile(ms, 95)),
                    "mean": float(np.mean(ms))} for phase, ms in by_phase.items()}


def trained_on(retriever: Retriever, questions: Sequence[Question]) -> dict[str, int]:
    """model name -> how many of `questions` that trained model of the retriever saw in training
    (a model that records its training questions knows; k-fold models never score their own)."""
    return {model.name: seen for model in retriever.trained_models()
            if (seen := sum(model.saw(q.query) for q in questions))}


def diagnostics_by_kind(results: Mapping[str, RetrievalResult]) -> dict[str, dict[str, Diagnostics]]:
    """kind -> question id -> that question's record of the kind."""
    out: dict[str, dict[str, Diagnostics]] = {}
    for qid, result in results.items():
        for record in result.diagnostics:
            out.setdefault(record.kind, {})[qid] = record
    return out


def _stored_run(driver: neo4j.Driver, database: str | None, run_id: str, run_dir: Path) -> str | None:
    """What is stored under `run_id` (in the graph or as its folder), in a few words; None if nothing."""
    stored = traces.run_summary(driver, database, run_id)
    if stored is None and (run_dir / "report.json").is_file():
        stored = (run_dir / "report.json").read_text(encoding="utf-8")
    if stored is None:
        return "a run's results in its folder" if (run_dir / "results.json").is_file() else None
    try:
        summary = json.loads(stored)
    except ValueError:
        return "a run"
    return f"{summary.get('method', '?')} on corpus '{summary.get('corpus') or '-'}', {summary.get('finished_at', '?')}"


def _is_run_folder(run_dir: Path, run_id: str) -> bool:
    """Whether `run_dir` is a stored run of this id (its report.json says so), so that replacing it
    may remove the folder: never a folder of someone else's that happens to bear the name."""
    try:
        return (not run_dir.is_symlink() and run_dir.is_dir()
                and json.loads((run_dir / "report.json").read_text(encoding="utf-8")).get("run_id") == run_id)
    except (OSError, ValueError, AttributeError):
        return False


def evaluate(settings: Settings, driver: neo4j.Driver, options: EvalOptions,
             embedder: TextEmbedder | None = None) -> EvalRun:
    database = settings.neo4j_database
    if options.scoring not in official.SCORINGS:
        raise MhgraphError(f"unknown scoring '{options.scoring}'; choose from {', '.join(official.SCORINGS)}")
    spec = registry.get(options.method)
    method_options = registry.options_for(settings, options.method)
    held_out = registry.held_out(options.method)
    questions = load_questions(options.questions_path, types=options.types, limit=options.limit,
                               per_type=options.per_type, exclude=held_out)
    if not questions:
        raise MhgraphError(f"{options.questions_path}: no questions selected")
    graph = GraphContext.open(driver, database, settings.corpus)
    corpus = graph.corpus
    matcher = gold_matcher(driver, database, corpus)
    gold = matcher.gold_sets(questions)
    coverage = coverage_report(questions, matcher)
    with_evidence = [q for q in questions if q.evidence]
    if with_evidence and len(coverage.questions_without_gold) == len(with_evidence) and not options.answer:
        # every retrieval figure would be 0 over no question: the questions were written for another
        # corpus (answers are scored without gold chunks, so --answer runs)
        raise MhgraphError(f"{options.questions_path}: the evidence of its {len(with_evidence)} question"
                           f"{'s' * (len(with_evidence) != 1)} is not in corpus '{corpus}' (no fact matches its "
                           "chunks): give the corpus these questions were written for (--corpus)")
    if coverage.unmatched:   # e.g. a document deleted since the questions were written
        warnings.warn(f"{len(coverage.unmatched)} of {coverage.facts} evidence facts match no chunk of corpus "
                      f"'{corpus}' (the report's gold coverage lists them): our rule scores their questions on the "
                      "gold chunks that remain, the official rule counts them missed", stacklevel=2)

    # The models first (the reader's, metarag's llm extractor's): a missing model or endpoint
    # setting fails before any retrieval.
    registry.check_ready(options.method, graph, method_options)   # before any model loads
    method_calls_llm = spec.calls_llm(method_options)
    llm = load_llm(settings, cache=options.llm_cache) if options.answer or method_calls_llm else None
    # Model loading and the first query's planning happen here, outside the timed searches.
    embedder = embedder or registry.question_embedder(graph, settings)
    retriever = registry.build_retriever(options.method, graph, settings, method_options, embedder=embedder,
                                         llm=llm, questions=questions)
    retriever.search(questions[0].query, top_k=options.top_k)
    if llm is not None:   # the warm-up's model calls are not the run's
        llm.usage = Usage()
    params = {**options.params, **retriever.params}
    if seen := trained_on(retriever, questions):
        params["trained_on"] = {name: f"{n} of {len(questions)} questions in training: not held out"
                                for name, n in seen.items()}
        for name, n in seen.items():
            warnings.warn(f"{name} was trained on {n} of the {len(questions)} questions evaluated: "
                          f"its figures on them are not held out", stacklevel=2)

    started_at = datetime.now(timezone.utc)
    run_id = options.run_id or f"{options.method}-k{options.top_k}-{started_at:%Y%m%dT%H%M%S%f}"[:-3]
    run_dir = options.runs_dir / run_id
    stored = _stored_run(driver, database, run_id, run_dir) if options.run_id is not None else None
    if stored:
        # said before the searches, so that a run id given by mistake can be stopped in time
        warnings.warn(f"run '{run_id}' replaces the stored run of that id ({stored}) once it finishes",
                      stacklevel=2)
    t0 = time.perf_counter()
    if options.engine == "ray":
        results = search_on_ray(settings, corpus, options.method, questions, options.top_k,
                                address=options.address, workers=options.workers, progress=options.progress,
                                llm=llm if method_calls_llm else None, llm_cache=options.llm_cache)
    else:
        results = _run_all(retriever, questions, options)
    wall = time.perf_counter() - t0

    with_gold = {qid: ids for qid, ids in gold.items() if ids}
    query_vectors = dict(zip([q.id for q in questions],
                             embedder.embed_queries([q.query for q in questions]).tolist()))
    vectors = chunk_embeddings(driver, database, sorted({c for ids in with_gold.values() for c in ids}))
    hardness = difficulties({q.id: len(q.evidence) for q in questions}, with_gold, query_vectors, vectors,
                            lam=options.similarity_weight)
    records = score_results(questions, results, gold, recall_at=options.recall_at,
                            difficulty={qid: d.value for qid, d in hardness.items()})
    edges = report_edges([d.value for d in hardness.values()], options.similarity_weight)
    summary = summarise(records, method=options.method, params=params,
                        label=options.run_id or run_label(options.method, params), edges=edges)
    summary["difficulty"] = {"similarity_weight": options.similarity_weight, "edges": list(edges)}
    summary["scoring"] = options.scoring
    official_scores = official.score_all(questions, results) if options.scoring != "ours" else None
    if official_scores is not None:
        summary["official"] = official.summarise(questions, official_scores)
    if phases := phase_latency(results.values()):
        summary["phases_ms"] = phases
    run_context = RunContext(driver, database, corpus, run_id, questions, results, gold, params,
                             llm=llm if method_calls_llm else None, held_out=held_out)
    diagnostics = diagnostics_by_kind(results)
    for kind, kept in diagnostics.items():   # each method's own section: filters, reasoning, ...
        if (section := type(next(iter(kept.values()))).summarise(kept, run_context)) is not None:
            summary[kind] = section
    answers = answer_scores = None
    if options.answer:
        answers, answer_scores, summary["answers"] = _answer_all(llm, questions, results, options)
    finished_at = datetime.now(timezone.utc)
    chunk_size, chunk_overlap = corpus_chunking(driver, database, corpus)
    summary.update({
        "run_id": run_id, "started_at": started_at.isoformat(), "finished_at": finished_at.isoformat(),
        "wall_seconds": wall, "workers": options.workers, "engine": options.engine, "questions_file": str(options.questions_path),
        "selection": {"limit": options.limit, "per_type": options.per_type, "types": list(options.types or []),
                      "questions": len(questions)},
        "corpus": corpus,
        "embedding_model": embedder.model_name, "embed_header": corpus_embed_header(driver, database, corpus),
        "chunk_size": chunk_size or settings.chunk_size,
        "chunk_overlap": settings.chunk_overlap if chunk_overlap is None else chunk_overlap, "gold_coverage": {
            "facts": coverage.facts, "matched": coverage.matched, "share": coverage.share,
            "unmatched": [asdict(u) for u in coverage.unmatched], "lines": coverage.lines()},
    })
    if options.scoring != "ours":  # which facts the official rule can never match at this chunking
        reachable = official.fact_coverage(questions, matcher.chunk_texts())
        summary["gold_coverage"].update(official_matched=reachable.matched,
                                        official_unmatched=[asdict(u) for u in reachable.unmatched])
        summary["gold_coverage"]["lines"] += reachable.lines()

    if _is_run_folder(run_dir, run_id):
        shutil.rmtree(run_dir)   # the replaced run's files (its plots, a calibration) go with it
    if not options.trace and stored:   # traced runs replace their stored one as they are written
        traces.delete_run(driver, database, run_id)   # not left beside the new folder as if it were this run
    run_dir.mkdir(parents=True, exist_ok=True)
    files = write_report(summary, run_dir)
    by_id = {r.question_id: r for r in records}
    per_question = [{**_result_json(q, results[q.id], gold[q.id]),
                     "scores": question_rows([by_id[q.id]])[0],
                     "difficulty": asdict(hardness[q.id]) if q.id in hardness else None,
                     **_official_json(official_scores, q.id),
                     **({"generated": {**answers[q.id].to_json(), "correct": answer_scores[q.id]}} if answers else {})}
                    for q in questions]
    (run_dir / "results.json").write_text(json.dumps(per_question, indent=1, default=str), encoding="utf-8")
    if options.trace:
        traces.write_run(driver, database, run_id=run_id, method=options.method, corpus=corpus, params=params,
                         started_at=started_at, finished_at=finished_at, summary=summary, questions=questions,
                         results=results, gold=gold, answers=answers, answer_scores=answer_scores,
                         reader=summary["answers"]["reader"] if answers else None)
        for kept in diagnostics.values():
            type(next(iter(kept.values()))).write_traces(kept, run_context)
    return EvalRun(run_id, run_dir, summary, coverage,
                   {k: str(v) for k, v in asdict(files).items()} | {"results": str(run_dir / "results.json")})


def _run_files(run: str | Path, runs_dir: Path, name: str) -> tuple[Path, Path, Path]:
    """Where a run's file `name` is looked for: in the run directory given, in the run folder of that id
    under runs_dir, or the path given itself."""
    path = Path(run)
    return path / name, runs_dir / str(run) / name, path


def load_results(run: str | Path, runs_dir: Path = Path("runs")) -> tuple[Path, list[dict[str, Any]]]:
    """A run's per-question results (its results.json) and their path, by run directory, file or id."""
    for candidate in _run_files(run, runs_dir, "results.json"):
        if candidate.is_file() and candidate.name == "results.json":
            try:
                rows = json.loads(candidate.read_text(encoding="utf-8"))
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise MhgraphError(f"{candidate}: not a run's results (invalid JSON: {exc})") from exc
            if not isinstance(rows, list) or not all(isinstance(r, dict) and "id" in r for r in rows):
                raise MhgraphError(f"{candidate}: not a run's results (a list of questions with an id)")
            return candidate, rows
    raise MhgraphError(f"{run}: no run results (no results.json there, nor in a run folder of that name "
                       f"under {runs_dir})")


def load_summary(run: str | Path, runs_dir: Path = Path("runs")) -> dict[str, Any]:
    """A run's summary (its report.json), by run directory, by file, or by run id under runs_dir."""
    for candidate in _run_files(run, runs_dir, "report.json"):
        if candidate.is_file():
            try:
                summary = json.loads(candidate.read_text(encoding="utf-8"))
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise MhgraphError(f"{candidate}: not a run summary (invalid JSON: {exc})") from exc
            if not isinstance(summary, dict) or not {"method", "label", "overall", "latency_ms"} <= summary.keys():
                raise MhgraphError(f"{candidate}: not a run summary (a run's report.json is)")
            return summary
    raise MhgraphError(f"{run}: no such run (neither a run directory nor {runs_dir / str(run)})")

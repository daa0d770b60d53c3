"""`mhgraph generate`: a question file with verified evidence from a corpus's claim layer (built
first unless it is there or --no-build is given)."""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import neo4j
import numpy as np

from mhgraph import cypher
from mhgraph.answer.reader import is_abstention
from mhgraph.app.claim_layer import build_claim_layer
from mhgraph.config import Settings
from mhgraph.errors import MhgraphError
from mhgraph.eval.answers import official_correct
from mhgraph.generate.candidate import INFERENCE, MHTS, MULTIHOP_RAG, NULL, NULL_ANSWER
from mhgraph.generate.groups import BridgeGroups
from mhgraph.generate.kinds import EntityKinds, claim_sentences
from mhgraph.generate.pipeline import Generator, partial_path, public, summarise
from mhgraph.generate.pool import ClaimPool
from mhgraph.generate.request import GenerateRequest
from mhgraph.generate.trees import ClaimTrees
from mhgraph.generate.writers import ModelWriter, make_writer
from mhgraph.graph.connection import connect
from mhgraph.graph.context import GraphContext
from mhgraph.ingest.corpus import named_json_lines
from mhgraph.ingest.textfile import is_gzip
from mhgraph.llm import LLMError, load_llm
from mhgraph.retrieval.registry import question_embedder


@dataclass
class GeneratedFile:
    path: Path
    summary_path: Path
    summary: dict[str, Any]


def summary_path(out: Path) -> Path:
    return out.with_name(out.stem + ".summary.json")


def write_questions(out: Path, records: list[dict[str, Any]]) -> None:
    """`records` in the form `out`'s name says, as the questions reader reads it: JSON Lines for
    .jsonl / .ndjson, else a JSON list; gzipped for a .gz name (no timestamp: a rerun writes the same
    bytes)."""
    if named_json_lines(out):
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    else:
        text = json.dumps(records, indent=2, ensure_ascii=False) + "\n"
    data = text.encode("utf-8")
    out.write_bytes(gzip.compress(data, mtime=0) if is_gzip(out) else data)


def _without_nulls_under_a_range(request: GenerateRequest) -> tuple[GenerateRequest, list[str]]:
    """A null question has no evidence, so no difficulty D to lie in --difficulty: under a range it
    is not asked for (its share goes to the other types), with a note, rather than written and dropped."""
    if request.difficulty is None or "null" not in request.types:
        return request, []
    if request.types == ("null",):
        raise MhgraphError("--difficulty: null questions have no evidence, so no difficulty D to lie in a range; "
                           "leave out --difficulty or ask for other types")
    return (request.model_copy(update={"types": tuple(t for t in request.types if t != "null")}),
            ["null: skipped, a null question has no difficulty D to lie in --difficulty"])


def check_writable(out: Path) -> None:
    """Before any work: the output's folder exists and can be written (one line otherwise)."""
    folder = out.parent if str(out.parent) else Path(".")
    if out.is_dir():
        raise MhgraphError(f"{out}: is a folder; give a file name for the questions")
    if not folder.is_dir():
        raise MhgraphError(f"{out}: {folder} is a file, not a folder" if folder.exists()
                           else f"{out}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK) or (out.exists() and not os.access(out, os.W_OK)):
        raise MhgraphError(f"{out}: cannot write here (permission denied)")


def claim_layer_state(graph: GraphContext) -> dict[str, Any]:
    records, _, _ = graph.driver.execute_query(cypher.load("generate/claim_layer"), corpus=graph.corpus,
                                               database_=graph.database, routing_=neo4j.RoutingControl.READ)
    return records[0].data()


def generate_questions(settings: Settings, request: GenerateRequest, out: Path, *, build: bool = True,
                       cache: bool = True, status: Callable[[str], None] = lambda message: None) -> GeneratedFile:
    check_writable(out)
    timings: dict[str, float] = {}
    started = time.perf_counter()
    with connect(settings) as driver:
        graph = GraphContext.open(driver, settings.neo4j_database, settings.corpus)
        state = claim_layer_state(graph)
        if state["chunks"] == 0:
            raise MhgraphError(f"corpus '{graph.corpus}' has no chunks: ingest it first")
        if state["done"] < state["chunks"]:
            if not build:
                raise MhgraphError(f"corpus '{graph.corpus}' has no complete claim layer ({state['done']} of "
                                   f"{state['chunks']} chunks done): run 'mhgraph claims build --corpus "
                                   f"{graph.corpus}', or leave out --no-build")
            status(f"building the claim layer of '{graph.corpus}' ({state['chunks'] - state['done']} chunks to do)")
            build_claim_layer(dataclasses.replace(settings, corpus=graph.corpus), cache=cache, progress=False)
            state = claim_layer_state(graph)
            timings["claim_layer"] = time.perf_counter() - started
        status(f"reading the claim layer of '{graph.corpus}' ({state['claims']} claims)")
        t = time.perf_counter()
        pool = ClaimPool.load(driver, graph.database, graph.corpus)
        embedder = question_embedder(graph, settings, status)
        timings["load"] = time.perf_counter() - t
        llm = load_llm(settings, cache=cache)
        writer = make_writer(llm, request.wording)
        kinds = EntityKinds(sentences=claim_sentences(pool.claims))   # each target's kind by its claims' majority
        groups = BridgeGroups(pool, kinds, request.seed, request.hops, grouping=request.grouping,
                              coherence=request.coherence)
        trees: list[ClaimTrees] = []

        def mhts(question_type: str):
            if question_type != INFERENCE:
                return iter(())
            if not trees:
                status("clustering claims (MHTS)")
                t0 = time.perf_counter()
                trees.append(ClaimTrees(pool, kinds, request.seed, driver=driver, database=graph.database,
                                        hops=request.hops, components=request.components, theta=request.theta))
                timings["cluster"] = time.perf_counter() - t0
            return trees[0].candidates()

        constructions = {}
        if request.construction in ("multihop-rag", "both"):
            constructions[MULTIHOP_RAG] = groups.candidates
        if request.construction in ("mhts", "both"):
            constructions[MHTS] = mhts
        request, skipped = _without_nulls_under_a_range(request)
        generator = Generator(pool, writer, embedder.embed_query, request, constructions=constructions,
                              claims_by=state["extractors"], embedding_model=embedder.model_name)
        generation = generator.run(out, progress=status)
        generation.notes.extend(skipped)
    generation.seconds.update(timings)
    answerable = None
    if isinstance(writer, ModelWriter) and request.answer_check:
        t = time.perf_counter()
        try:
            answerable = answerability(writer, generation.records, request.answer_check, request.seed)
        except LLMError as exc:   # the questions are made: the partial file keeps them for the re-run
            raise MhgraphError(f"the model failed in the answerability check ({exc}); the questions are kept in "
                               f"{partial_path(out)}: run the same command again to resume") from None
        generation.seconds["answer_check"] = time.perf_counter() - t
    if trees:
        generation.notes.append(f"MHTS: {len(trees[0].ids)} claims clustered into {trees[0].components} mixture "
                                f"components (theta {request.theta})")
    summary = summarise(generation, pool, writer, request, answerable)
    if llm is not None:
        summary["model_usage"] = llm.usage.as_dict()
    summary["seconds"]["total"] = round(time.perf_counter() - started, 2)
    try:
        write_questions(out, [public(r) for r in generation.records])
        summary_path(out).write_text(json.dumps(summary, indent=2, default=str) + "\n", encoding="utf-8")
    except OSError as exc:
        raise MhgraphError(f"{out}: cannot write ({exc.strerror or exc}); the questions are kept in "
                           f"{partial_path(out)}") from None
    partial_path(out).unlink(missing_ok=True)
    return GeneratedFile(out, summary_path(out), summary)


def answered_right(reply: str, record: dict[str, Any]) -> bool:
    """The answerability check's verdict on one question: the official rule, abstention for null questions."""
    if record["answer"] == NULL_ANSWER or record["question_type"] == NULL:
        return bool(is_abstention(reply))
    return bool(official_correct(reply, record["answer"]))


def answerability(writer: ModelWriter, records: list[dict[str, Any]], size: int, seed: int) -> dict[str, Any]:
    """A sample stratified by type, each answered by the model from its own gold evidence; the
    share it answers right (the official rule; abstention for null questions)."""
    rng = np.random.default_rng([seed, 5])
    by_type: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        by_type.setdefault(r["question_type"], []).append(r)
    sample: list[dict[str, Any]] = []
    per_type = max(1, size // max(len(by_type), 1))
    for t in sorted(by_type):
        rows = by_type[t]
        sample.extend(rows[i] for i in sorted(rng.permutation(len(rows))[:per_type]))
    right = 0
    for r in sample:
        right += answered_right(writer.answer_from_evidence(r["query"], [e["fact"] for e in r["evidence_list"]]), r)
    return {"sample": len(sample), "answered_right": right,
            "share": round(right / len(sample), 4) if sample else None, "model": writer.label}

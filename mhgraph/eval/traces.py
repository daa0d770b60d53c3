"""Evaluation runs stored in Neo4j, so their evidence paths can be walked in Browser.

(:EvalRun {id, method, corpus, params, started_at, finished_at, metrics, questions, hits_at_10, mrr_at_10})
  -[:ASKED]->(:Question {id, text, type, answer})
(:Question)-[:HAS_GOLD]->(:Chunk)                              gold evidence in each corpus it was run on
(:Question)-[:RETRIEVED {run, hop, rank, score, gold}]->(:Chunk) every retrieved chunk of a run
(:Chunk)-[:LED_TO {run, question, hop}]->(:Chunk)              parent -> child between hops
(:EvalRun)-[:ASKED {answer, abstained, correct_official, correct_exact, failed, reader}]->(:Question)
                                                               with eval --answer
(:Question)-[:CITED {run, number}]->(:Chunk)                   the excerpts an answer cites
(:Question)-[:STEP {run, hop}]->(:Step {run, question, hop, query, thought})
  -[:FETCHED {rank, score, gold}]->(:Chunk)                    ircot's and decompose's steps, in order
(:Step)-[:NEXT_STEP]->(:Step), (:Chunk)-[:PROMPTED {run}]->(:Step)  the chunk whose text led to a thought
(:Question)-[:ASKED_TARGET {run, hop}]->(:Target), (:Question)-[:USED_CLAIM {run, hop, target}]->(:Claim)
                                                               claims: the targets asked and the claims used
(:EvalRun)-[:ASKED {filter, filter_sources, filter_days, filter_from, filter_to, filter_extractor,
                    fallback}]->(:Question)                    metarag's filter per question
The saved Browser queries in mhgraph/cypher/browser/ read this.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Iterable, Mapping, Sequence

import neo4j

from mhgraph import cypher
from mhgraph.types import Question
from mhgraph.types import RetrievalResult

BATCH = 2000


def ensure_schema(driver: neo4j.Driver, database: str | None) -> None:
    for statement in cypher.load_statements("eval/schema"):
        driver.execute_query(statement, database_=database)


def delete_run(driver: neo4j.Driver, database: str | None, run_id: str) -> bool:
    records, _, _ = driver.execute_query(cypher.load("eval/delete_run"), run=run_id, database_=database)
    return bool(records) and records[0]["deleted"] > 0


def list_runs(driver: neo4j.Driver, database: str | None) -> list[dict[str, Any]]:
    records, _, _ = driver.execute_query(cypher.load("eval/list_runs"), database_=database)
    return [r.data() for r in records]


def _batches(rows: Sequence[dict], size: int = BATCH) -> Iterable[Sequence[dict]]:
    for i in range(0, len(rows), size):
        yield rows[i:i + size]


def filter_row(question_id: str, result: RetrievalResult) -> dict[str, Any]:
    """metarag's filter for write_filters: the JSON form and its parts (None: no such condition)."""
    from mhgraph.filters.model import MetadataFilter

    found = MetadataFilter.from_json(result.details["extraction"]["filter"])
    return {"question": question_id, "filter": json.dumps(found.to_json()), "sources": list(found.sources) or None,
            "days": list(found.days) or None, "from": found.day_from, "to": found.day_to,
            "fallback": result.details["fallback"]}


def step_rows_of(question_id: str, result: RetrievalResult, gold: set[str]) -> list[dict[str, Any]]:
    """write_steps rows of one question: its steps (result.details["steps"], one per hop), each with
    the chunks its hop added."""
    hops = {h.index: h for h in result.hops}
    rows = []
    for step in result.details.get("steps", ()):
        hop = hops.get(step["hop"])
        fetched = [{"chunk": c.chunk_id, "rank": c.rank, "score": c.score, "gold": c.chunk_id in gold}
                   for c in (hop.chunks if hop else ())]
        rows.append({"question": question_id, "hop": step["hop"], "query": step["query"], "thought": step["thought"],
                     "parent": step["parent"], "previous_hop": step["hop"] - 1, "fetched": fetched})
    return rows


def write_run(
    driver: neo4j.Driver,
    database: str | None,
    *,
    run_id: str,
    method: str,
    corpus: str,
    params: Mapping[str, Any],
    started_at: datetime,
    finished_at: datetime,
    summary: Mapping[str, Any],
    questions: Sequence[Question],
    results: Mapping[str, RetrievalResult],
    gold: Mapping[str, Sequence[str]],
    answers: Mapping[str, Any] | None = None,
    answer_scores: Mapping[str, Mapping[str, bool]] | None = None,
    reader: str | None = None,
) -> None:
    """Store one run; an earlier run with the same id is replaced."""
    ensure_schema(driver, database)
    delete_run(driver, database, run_id)
    ranking = summary.get("overall", {}).get("ranking", {})
    driver.execute_query(
        cypher.load("eval/create_run"), id=run_id, method=method, corpus=corpus, params=json.dumps(dict(params)),
        started_at=started_at, finished_at=finished_at, metrics=json.dumps(summary, default=str),
        questions=len(questions), hits_at_10=ranking.get("hits@10"), mrr_at_10=ranking.get("mrr@10"),
        database_=database,
    )
    question_rows = [{"id": q.id, "text": q.query, "type": q.question_type, "answer": q.answer,
                      "gold": list(gold.get(q.id, ()))} for q in questions]
    retrieved, led_to = [], []
    for q in questions:
        wanted = set(gold.get(q.id, ()))
        for hop in results[q.id].hops:
            for c in hop.chunks:
                retrieved.append({"question": q.id, "chunk": c.chunk_id, "hop": hop.index, "rank": c.rank,
                                  "score": c.score, "gold": c.chunk_id in wanted})
                if c.parent_id:
                    led_to.append({"question": q.id, "parent": c.parent_id, "chunk": c.chunk_id, "hop": hop.index})
    for rows in _batches(question_rows, 500):
        driver.execute_query(cypher.load("eval/write_questions"), run=run_id, questions=list(rows), database_=database)
    for rows in _batches(retrieved):
        driver.execute_query(cypher.load("eval/write_retrieved"), run=run_id, rows=list(rows), database_=database)
    for rows in _batches(led_to):
        driver.execute_query(cypher.load("eval/write_led_to"), run=run_id, rows=list(rows), database_=database)
    step_rows = [row for q in questions for row in step_rows_of(q.id, results[q.id], set(gold.get(q.id, ())))]
    for rows in _batches(step_rows, 500):   # in hop order within a batch: NEXT_STEP finds the step before
        driver.execute_query(cypher.load("eval/write_steps"), run=run_id, rows=list(rows), database_=database)
    claim_rows = [{"question": q.id, "hop": c["hop"], "target": c["target"], "claim": c["claim"]}   # target: its key
                  for q in questions for c in results[q.id].details.get("claims", ())]
    for rows in _batches(claim_rows):
        driver.execute_query(cypher.load("eval/write_claims"), run=run_id, rows=list(rows), corpus=corpus,
                             database_=database)
    filter_rows = [filter_row(q.id, results[q.id]) for q in questions if "extraction" in results[q.id].details]
    for rows in _batches(filter_rows, 500):
        driver.execute_query(cypher.load("eval/write_filters"), run=run_id, filters=list(rows),
                             extractor=params.get("filter_extractor"), database_=database)
    if answers:
        answer_rows = [{"question": q.id, "text": answers[q.id].text, "abstained": answers[q.id].abstained,
                        "official": answer_scores[q.id]["official"], "exact": answer_scores[q.id]["exact"],
                        "failed": answers[q.id].failed,
                        "citations": [{"chunk": c.chunk_id, "number": c.number} for c in answers[q.id].citations]}
                       for q in questions]
        for rows in _batches(answer_rows, 500):
            driver.execute_query(cypher.load("eval/write_answers"), run=run_id, reader=reader, answers=list(rows),
                                 database_=database)

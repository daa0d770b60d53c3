"""Evaluation runs stored in Neo4j, so their evidence paths can be walked in Browser.

(:EvalRun {id, method, corpus, params, started_at, finished_at, metrics, questions, hits_at_10, mrr_at_10})
  -[:ASKED]->(:Question {id, text, type, answer})
(:Question)-[:HAS_GOLD]->(:Chunk)                              gold evidence in each corpus it was run on
(:Question)-[:FROM_CLAIM]->(:Claim)                            the claims a generated question was built from
(:Question)-[:RETRIEVED {run, hop, rank, score, gold}]->(:Chunk) every retrieved chunk of a run
(:Chunk)-[:LED_TO {run, question, hop}]->(:Chunk)              parent -> child between hops
(:EvalRun)-[:ASKED {answer, abstained, correct_official, correct_exact, failed, reader}]->(:Question)
                                                               with eval --answer
(:Question)-[:CITED {run, number}]->(:Chunk)                   the excerpts an answer cites

Each method's diagnostics records add their own rows (Diagnostics.write_traces, e.g. a reasoning
chain's (:Step)s, a claim trail's USED_CLAIM, a filter on ASKED). They follow one rule, which lets
a run be deleted whatever methods made it: a trace relationship carries the run's id (`run`) and
starts at the run's Question, and a trace node carries `run` and hangs from the Question.
HAS_GOLD and FROM_CLAIM carry no `run`: they describe the question (FROM_CLAIM links the ids in
Question.claims, those the graph holds, whatever the run's corpus) and go with the Question when
the last run that asked it is deleted; the Chunks and Claims they point at stay.
The saved Browser queries in mhgraph/cypher/browser/ read this.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Iterable, Mapping, Sequence

import neo4j

from mhgraph import cypher
from mhgraph.types import Question, RetrievalResult

BATCH = 2000


def ensure_schema(driver: neo4j.Driver, database: str | None) -> None:
    for statement in cypher.load_statements("eval/schema"):
        driver.execute_query(statement, database_=database)


def delete_run(driver: neo4j.Driver, database: str | None, run_id: str) -> bool:
    records, _, _ = driver.execute_query(cypher.load("eval/delete_run"), run=run_id, database_=database)
    # chunks and claims of changed documents that only this run's traces kept
    driver.execute_query(cypher.load("eval/delete_retired"), database_=database)
    return bool(records) and records[0]["deleted"] > 0


def stale_runs(driver: neo4j.Driver, database: str | None, run_ids: Sequence[str]) -> dict[str, list[str]]:
    """Of runs `run_ids`, those marked stale: id -> the keys of the documents changed since."""
    records, _, _ = driver.execute_query(cypher.load("eval/stale_runs"), ids=list(run_ids), database_=database,
                                         routing_=neo4j.RoutingControl.READ)
    return {r["id"]: r["keys"] for r in records}


def run_summary(driver: neo4j.Driver, database: str | None, run_id: str) -> str | None:
    """The summary (report.json's content) stored with a run, or None when there is no such run."""
    records, _, _ = driver.execute_query("MATCH (r:EvalRun {id: $run}) RETURN r.metrics AS metrics", run=run_id,
                                         database_=database, routing_=neo4j.RoutingControl.READ)
    return records[0]["metrics"] if records else None


def list_runs(driver: neo4j.Driver, database: str | None) -> list[dict[str, Any]]:
    records, _, _ = driver.execute_query(cypher.load("eval/list_runs"), database_=database,
                                         routing_=neo4j.RoutingControl.READ)
    return [r.data() for r in records]


def _batches(rows: Sequence[dict], size: int = BATCH) -> Iterable[Sequence[dict]]:
    for i in range(0, len(rows), size):
        yield rows[i:i + size]


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
    claimed = [{"question": q.id, "claim_ids": list(q.claims)} for q in questions if q.claims]
    for rows in _batches(claimed, 500):
        driver.execute_query(cypher.load("eval/write_from_claim"), rows=list(rows), database_=database)
    for rows in _batches(retrieved):
        driver.execute_query(cypher.load("eval/write_retrieved"), run=run_id, rows=list(rows), database_=database)
    for rows in _batches(led_to):
        driver.execute_query(cypher.load("eval/write_led_to"), run=run_id, rows=list(rows), database_=database)
    if answers:
        answer_rows = [{"question": q.id, "text": answers[q.id].text, "abstained": answers[q.id].abstained,
                        "official": answer_scores[q.id]["official"], "exact": answer_scores[q.id]["exact"],
                        "failed": answers[q.id].failed,
                        "citations": [{"chunk": c.chunk_id, "number": c.number} for c in answers[q.id].citations]}
                       for q in questions]
        for rows in _batches(answer_rows, 500):
            driver.execute_query(cypher.load("eval/write_answers"), run=run_id, reader=reader, answers=list(rows),
                                 database_=database)

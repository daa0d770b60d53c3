"""bench/llm_replay.py and bench/gpu_replies.py: the device's jobs ask exactly what the generator asks, the
follow-ups are chained from the first replies, and the loopback endpoint replays known requests and
records the rest. (The model-written questions of bench/results/generate-model-*.md rest on these.)"""

from __future__ import annotations

import io
import json
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from mhgraph.generate.writers import (
    answer_messages,
    compose_messages,
    decompose_messages,
    question_messages,
    write_messages,
)

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import gpu_replies
import llm_replay

TASK = "Write a question whose answer is Arm. It must combine what all 2 facts say."
FACTS = ["SoftBank bought Arm (the chip designer) in 2016.", "Arm listed its shares on the Nasdaq."]
EVIDENCE = f"1. (Reuters, 2023-09-14) {FACTS[0]}\n2. {FACTS[1]}"


def test_jobs_chain_the_generators_own_follow_up_requests() -> None:
    write = write_messages(TASK, EVIDENCE)
    compose = compose_messages("1. a\n2. b")
    requests = [{"messages": write}, {"messages": compose}, {"messages": question_messages("")}]
    jobs, counts = llm_replay.build_jobs(requests, 0)
    assert counts == {"inference": 1, "mhts": 1}       # the harvest's empty-claim question is no job
    assert [j["messages"] for j in jobs] == [write, compose]
    # what the device asks after the first replies is what ModelWriter would ask with them
    answered = gpu_replies.fill(jobs[0]["then"][0], "Which chip designer was bought and listed?")
    assert answered["messages"] == answer_messages("Which chip designer was bought and listed?", FACTS)
    follow = [gpu_replies.fill(f, "Arm was bought and listed.")["messages"] for f in jobs[1]["then"]]
    assert follow == [question_messages("Arm was bought and listed."), decompose_messages("Arm was bought and listed.")]


def test_per_type_keeps_the_first_requests_of_each_type() -> None:
    requests = [{"messages": write_messages(TASK, EVIDENCE)} for _ in range(3)]
    requests.append({"messages": write_messages("Write a question in the style of the facts about Zorblax, an entity "
                                                "that does not exist; the question must name Zorblax.", EVIDENCE)})
    jobs, counts = llm_replay.build_jobs(requests, 2)
    assert counts == {"inference": 2, "null": 1} and len(jobs) == 3
    # a null question's check is asked from no evidence, as app.generation.answerability asks it
    assert gpu_replies.fill(jobs[2]["then"][0], "Q?")["messages"] == answer_messages("Q?", [])


def test_answer_jobs_follows_replies_and_stops_at_the_deadline() -> None:
    jobs, _ = llm_replay.build_jobs([{"messages": write_messages(TASK, EVIDENCE)},
                                     {"messages": compose_messages("1. a\n2. b")}], 0)

    def run(batch, deadline):
        return [job["prefill"] + ('Which designer?"}' if "Facts:" in job["messages"][-1]["content"] else 'x"}')
                for job in batch]

    out = io.StringIO()
    assert gpu_replies.answer_jobs(jobs, run, float("inf"), out) == 5    # 2 first, then 1 answer + 2 MHTS steps
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert rows[2]["messages"] == answer_messages("Which designer?", FACTS)
    assert rows[0]["reply"] == '{"question": "Which designer?"}'
    # a reply with no usable field gets no follow-up; past the deadline nothing more is asked
    out = io.StringIO()
    assert gpu_replies.answer_jobs(jobs, lambda batch, d: ["{}"] * len(batch), float("inf"), out) == 2
    out = io.StringIO()
    assert gpu_replies.answer_jobs(jobs, lambda batch, d: [None] * len(batch), time.monotonic() - 1, out) == 0
    assert out.getvalue() == ""


def test_read_value_repairs_as_the_generator_does_and_collapses_whitespace() -> None:
    assert gpu_replies.read_value('```json\n{"claim": "a\\n  b"}\n```', "claim") == "a b"
    assert gpu_replies.read_value('{"claim": "a"} and more', "claim") == "a"
    assert gpu_replies.read_value('{"claim": "  "}', "claim") is None
    assert gpu_replies.read_value("not json", "claim") is None
    assert gpu_replies.read_value('{"claim": "cut short', "claim") == "cut short"    # closed as the generator closes it


@pytest.fixture
def endpoint(tmp_path: Path):
    known = write_messages(TASK, EVIDENCE)
    table = tmp_path / "replies.jsonl"
    table.write_text(json.dumps({"messages": known, "reply": '{"question": "Q?"}'}) + "\n")
    record = tmp_path / "unanswered.jsonl"
    httpd, counts = llm_replay.make_server(llm_replay.load_table([table]), record)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", known, record, counts
    httpd.shutdown()
    httpd.server_close()


def _ask(url: str, messages) -> str:
    body = json.dumps({"model": "m", "messages": messages}).encode()
    req = urllib.request.Request(f"{url}/chat/completions", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as reply:
        return json.loads(reply.read())["choices"][0]["message"]["content"]


def test_the_endpoint_replays_known_requests_and_records_the_others(endpoint) -> None:
    url, known, record, counts = endpoint
    assert _ask(url, known) == '{"question": "Q?"}'
    other = compose_messages("1. a\n2. b")
    assert _ask(url, other) == llm_replay.EMPTY_REPLY
    assert _ask(url, other) == llm_replay.EMPTY_REPLY          # recorded once
    assert [json.loads(line)["messages"] for line in record.read_text().splitlines()] == [other]
    assert counts == {"answered": 1, "unknown": 2}

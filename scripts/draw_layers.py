"""Draw docs/img/layers.png, the layers of the package (docs/architecture.md), from the table
tests/test_layers.py enforces, so the picture and the check cannot drift apart.

    python scripts/draw_layers.py
"""

from __future__ import annotations

import sys
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from tests.test_layers import LAYERS  # noqa: E402

ROLES = ["shared types and text", "settings, graph, models, ingest", "the parts methods are made of", "the methods and their registry",
         "evaluation", "question synthesis", "application services", "HTTP API and MCP server", "command line"]
COLOURS = ["#e8eef7", "#dde8f3", "#d2e2ef", "#f6e3c6", "#e4f0dc", "#e0efe9", "#efe0ef", "#f1e6d8", "#f3dede"]


def main() -> None:
    figure = Figure(figsize=(10, 6.4), dpi=150)
    FigureCanvasAgg(figure)
    ax = figure.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, 10)
    ax.set_ylim(0, len(LAYERS) + 0.4)
    ax.axis("off")
    for i, (names, role, colour) in enumerate(zip(LAYERS, ROLES, COLOURS)):
        y = 0.25 + i
        ax.add_patch(FancyBboxPatch((0.3, y), 9.4, 0.78, boxstyle="round,pad=0.02", facecolor=colour,
                                    edgecolor="#555555", linewidth=0.8))
        ax.text(0.55, y + 0.52, f"{i}  {role}", fontsize=10.5, weight="bold", va="center")
        ax.text(0.55, y + 0.2, ", ".join(names), fontsize=9.5, va="center", family="monospace")
    ax.annotate("", xy=(9.45, len(LAYERS) - 0.1), xytext=(9.45, 0.55),
                arrowprops={"arrowstyle": "<-", "color": "#555555", "lw": 1.2})
    ax.text(9.15, len(LAYERS) / 2, "imports point down only", rotation=90, fontsize=9, va="center", ha="center",
            color="#555555")
    out = REPO / "docs" / "img" / "layers.png"
    figure.savefig(out)
    print(f"written {out}")


if __name__ == "__main__":
    main()

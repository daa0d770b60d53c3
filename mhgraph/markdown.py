"""Markdown pieces every report shares: numbers and tables."""

from __future__ import annotations

from typing import Sequence


def fmt(x: float) -> str:
    """A score as reports print it."""
    return f"{x:.4f}"


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A Markdown table's lines."""
    return ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|",
            *("| " + " | ".join(row) + " |" for row in rows)]

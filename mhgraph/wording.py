"""Counts in messages: "1 document", "2 documents"."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`n` and `noun`, the noun in the plural unless `n` is 1 (`plural` where adding "s" is wrong)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"

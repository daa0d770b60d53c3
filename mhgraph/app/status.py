"""How a service says what it is doing while it loads models or reads the graph (the CLI prints
it to stderr; a server can log it)."""

from __future__ import annotations

from typing import Callable

Status = Callable[[str], None]


def silent(message: str) -> None:
    """A status that says nothing."""

"""Labels and property names are interpolated into Cypher (they cannot be parameters): validate them."""

from __future__ import annotations

import re

from mhgraph.errors import MhgraphError

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")


def identifier(name: str, what: str = "identifier") -> str:
    """Return `name` if it is a plain Cypher identifier, else raise."""
    if not isinstance(name, str) or not _IDENTIFIER.match(name):
        raise MhgraphError(f"invalid {what} {name!r}: use letters, digits and '_' (not starting with a digit)")
    return name

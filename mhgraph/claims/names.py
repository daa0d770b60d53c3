"""Topic and Target names as keys: the same thing written differently by two articles gets one
node. A key is the name in lower case, possessives, punctuation and a leading "the" dropped, and
company suffixes (Inc., Corp., Ltd., ...) left out: "The Verge's" -> "verge",
"Veltrix Robotics, Inc." -> "veltrix robotics"."""

from __future__ import annotations

import re
from collections.abc import Mapping

_SUFFIX = re.compile(r"\b(?:inc|incorporated|corp|corporation|co|ltd|limited|llc|plc|gmbh|ag|sa)\s*$")


def name_key(name: str) -> str:
    text = name.casefold().replace("\u2019", "'")
    text = re.sub(r"'s\b|'", "", text)
    text = " ".join(re.sub(r"[^0-9a-z]+", " ", text).split())
    text = re.sub(r"^the ", "", text)
    return _SUFFIX.sub("", text).strip() or text


def node_key(name: str, merged: Mapping[str, str]) -> str:
    """The key a node named `name` is stored under: its name key (the name in lower case where the
    key is empty, e.g. a name of punctuation alone), or the key that one was merged into."""
    key = name_key(name) or name.lower()
    return merged.get(key, key)

"""A candidate question before it is written: the claims it is built from, its type, and what the
construction already decided (the answer where the data fixes it, the bridge that joins the claims,
the tree for MHTS)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

INFERENCE, COMPARISON, TEMPORAL, NULL = "inference_query", "comparison_query", "temporal_query", "null_query"
TYPE_NAMES = {"inference": INFERENCE, "comparison": COMPARISON, "temporal": TEMPORAL, "null": NULL}
NULL_ANSWER = "Insufficient information."
MULTIHOP_RAG, MHTS = "multihop-rag", "mhts"


@dataclass(frozen=True)
class Candidate:
    construction: str                   # MULTIHOP_RAG or MHTS
    question_type: str                  # one of TYPE_NAMES' values
    claims: tuple[str, ...]             # the claims the question is built from, in the order it reads them
    bridge: str                         # what joins them: "target:<key>", "topic:<key>", "cluster:<level>/<id>"
    answer: str | None = None           # fixed by the data (None: the writer decides, e.g. a model's MHTS claim)
    evidence: bool = True               # False for null questions: the claims are decoys, not evidence
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def key(self) -> str:
        """A stable name for the candidate: the same claims, type and construction give the same key."""
        text = "|".join((self.construction, self.question_type, self.bridge, *self.claims))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

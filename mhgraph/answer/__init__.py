"""Answers from retrieved evidence, with citations, or an abstention when the evidence falls short."""

from mhgraph.answer.offline import OfflineReader
from mhgraph.answer.reader import (
    ABSTAIN,
    Answer,
    Citation,
    LLMReader,
    Reader,
    build_reader,
)

__all__ = ["ABSTAIN", "Answer", "Citation", "LLMReader", "OfflineReader", "Reader", "build_reader"]

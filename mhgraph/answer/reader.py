"""The reader: a question and its ranked evidence in, an answer with citations (or an abstention)
out. One prompt for `mhgraph ask` (streamed) and `eval --answer` (scored), so what a user sees is
what the benchmark measured."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterator, Protocol, Sequence

from mhgraph.llm import LLM, LLMError
from mhgraph.types import RetrievedChunk

# The benchmark's gold answer for a question the corpus cannot answer.
ABSTAIN = "Insufficient information."

# MultiHop-RAG's answer prompt (qa_llama.py: "a word or entity", "Insufficient Information"), with
# numbered excerpts and [n] citations added so that every answer points at its evidence.
SYSTEM = (
    "You answer questions using only the numbered news excerpts you are given. The answer is a word "
    "or an entity; for a yes/no question it is Yes or No. Write the answer, then the numbers of the "
    "excerpts that support it in brackets, like: Yes [1][3]. If the excerpts do not contain what is "
    f"needed to answer, reply exactly: {ABSTAIN} Answer directly, without explanation."
)
CITATION = re.compile(r"\[(\d{1,3})\]")
_PREFIX = re.compile(r"^\s*(?:final\s+)?answer\s*:\s*", re.IGNORECASE)


@dataclass(frozen=True)
class Citation:
    number: int                 # [n] in the answer: the n-th excerpt given to the reader
    chunk_id: str
    title: str | None
    source: str | None
    published: str | None       # YYYY-MM-DD

    @classmethod
    def of(cls, number: int, chunks: Sequence[RetrievedChunk]) -> Citation:
        """Citation [number] of the excerpts `chunks` (numbered from 1)."""
        chunk = chunks[number - 1]
        return cls(number, chunk.chunk_id, chunk.title, chunk.source, published(chunk))

    def line(self) -> str:
        return f"[{self.number}] {heading(self.title, self.source, self.published)}"


@dataclass
class Answer:
    text: str                   # the answer without its citation markers ("" when it failed)
    abstained: bool
    citations: list[Citation] = field(default_factory=list)
    raw: str = ""               # the reply as the reader gave it
    reader: str = ""            # what answered: backend:model, or the offline strategy
    failed: str | None = None   # why there is no answer (model unreachable, empty reply)
    evidence: int = 0           # excerpts given to the reader

    def to_json(self) -> dict:
        return {"text": self.text, "abstained": self.abstained, "raw": self.raw, "reader": self.reader,
                "failed": self.failed, "evidence": self.evidence,
                "citations": [c.__dict__ for c in self.citations]}


def published(chunk: RetrievedChunk) -> str | None:
    return chunk.published_at.date().isoformat() if chunk.published_at else None


def heading(title: str | None, source: str | None, date: str | None) -> str:
    """An excerpt's heading, the same in the prompt and in the sources `ask` lists: title (source, date)."""
    return f"{title or '(untitled)'} ({', '.join(p for p in (source, date) if p)})"


def evidence_block(chunks: Sequence[RetrievedChunk]) -> str:
    return "\n\n".join(f"[{n}] {heading(c.title, c.source, published(c))}\n{c.text.strip()}"
                       for n, c in enumerate(chunks, start=1))


def messages(question: str, chunks: Sequence[RetrievedChunk]) -> list[dict[str, str]]:
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"Question: {question}\n\nExcerpts:\n\n{evidence_block(chunks)}\n\nAnswer:"}]


def is_abstention(text: str) -> bool:
    return re.sub(r"[^a-z ]", "", text.lower()).strip().startswith("insufficient information")


def parse_reply(raw: str, chunks: Sequence[RetrievedChunk], reader: str) -> Answer:
    """The reply's first non-empty line (less an "Answer:" prefix and the markers) as the answer;
    [n] markers anywhere that name a given excerpt become citations."""
    lines = (_PREFIX.sub("", CITATION.sub("", line)).strip().rstrip(",;") for line in raw.splitlines())
    text = next((line for line in lines if line), "")   # "Answer:" alone on a line is not the answer
    numbers = [int(n) for n in CITATION.findall(raw)]
    cited = list(dict.fromkeys(n for n in numbers if 1 <= n <= len(chunks)))
    abstained = is_abstention(text)
    citations = [] if abstained else [Citation.of(n, chunks) for n in cited]
    failed = None if text else "empty reply"
    return Answer(ABSTAIN if abstained else text, abstained, citations, raw, reader, failed, len(chunks))


class Reader(Protocol):
    label: str

    def answer(self, question: str, chunks: Sequence[RetrievedChunk]) -> Answer: ...

    def stream(self, question: str, chunks: Sequence[RetrievedChunk]) -> Iterator[str | Answer]:
        """Text as it is generated, then the parsed Answer."""
        ...


class LLMReader:
    def __init__(self, llm: LLM, max_tokens: int = 64) -> None:
        self.llm = llm
        self.max_tokens = max_tokens     # an entity and a few citations
        self.label = llm.label

    def answer(self, question: str, chunks: Sequence[RetrievedChunk]) -> Answer:
        try:
            raw = self.llm.chat(messages(question, chunks), max_tokens=self.max_tokens)
        except LLMError as exc:
            self.llm.record_failure()
            return Answer("", False, raw="", reader=self.label, failed=str(exc), evidence=len(chunks))
        answer = parse_reply(raw, chunks, self.label)
        if answer.failed:
            self.llm.record_failure()
        return answer

    def stream(self, question: str, chunks: Sequence[RetrievedChunk]) -> Iterator[str | Answer]:
        pieces = []
        for piece in self.llm.stream(messages(question, chunks), max_tokens=self.max_tokens):
            pieces.append(piece)
            yield piece
        yield parse_reply("".join(pieces), chunks, self.label)


def build_reader(llm: LLM | None) -> Reader:
    """The LLM reader, or the offline strategy when no model is configured."""
    from mhgraph.answer.offline import OfflineReader

    return LLMReader(llm) if llm is not None else OfflineReader()

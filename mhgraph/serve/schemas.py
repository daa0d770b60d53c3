"""The request and response bodies of the HTTP API (validated by pydantic; FastAPI draws the
OpenAPI schema at /docs from them) and the evidence as JSON, which the MCP tools return too."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mhgraph.app.search import Evidence
from mhgraph.ingest.corpus import Format
from mhgraph.retrieval.registry import DEFAULT_METHOD
from mhgraph.types import RetrievalResult, RetrievedChunk


class Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class QueryRequest(Request):
    question: str = Field(min_length=1, description="The question to find evidence for.")
    method: str = Field(DEFAULT_METHOD, description="A retrieval method (GET /methods lists them).")
    k: int = Field(10, ge=1, le=100, description="Chunks per hop.")
    corpus: str | None = Field(None, description="The corpus to search (default: the server's --corpus, else the "
                                                 "graph's only corpus).")
    options: dict[str, Any] = Field(default_factory=dict,
                                    description="The method's options (GET /methods gives each method's schema); "
                                                "the server's configuration gives the rest.")


class AskRequest(QueryRequest):
    k: int = Field(10, ge=1, le=100, description="Chunks of the final ranking given to the reader.")
    stream: bool = Field(False, description="Stream the answer as server-sent events: 'evidence', then 'token' "
                                            "events as the text is generated, then 'answer' with the citations.")


class IngestRequest(Request):
    path: str = Field(min_length=1, description="A corpus file on the server's machine (JSON articles or flat "
                                                "Title:/Passage: text).")
    corpus: str | None = Field(None, description="The corpus name (default: from the file name).")
    format: Format | None = Field(None, description="The file's format (default: from its content).")
    document_key: str | None = Field(None, description="What documents are known by: auto, url, title or a field.")


class Chunk(BaseModel):
    chunk_id: str
    score: float
    rank: int
    text: str
    document_id: str | None = None
    title: str | None = None
    source: str | None = None
    published_at: str | None = None
    parent_id: str | None = Field(None, description="The chunk of the previous hop this one was reached from.")


class Hop(BaseModel):
    index: int
    query: str | None = None
    filters: dict[str, Any] | None = None
    seconds: float
    chunks: list[Chunk]


class QueryResponse(BaseModel):
    question: str
    method: str
    corpus: str | None
    seconds: float
    phases: dict[str, float]
    params: dict[str, Any]
    diagnostics: list[dict[str, Any]] = Field(description="What the method decided, one record per kind.")
    hops: list[Hop]


class Job(BaseModel):
    id: str
    kind: str
    status: Literal["queued", "running", "done", "failed"]
    done: int = Field(0, description="Articles written so far.")
    total: int | None = Field(None, description="Articles in the file (known once the file is checked).")
    result: dict[str, Any] | None = None
    error: str | None = None
    started_at: str | None = None
    finished_at: str | None = None


def error_at(exc: Any, prefix: tuple[str, ...] = ()) -> tuple[str, str]:
    """(where, what) of a pydantic validation error's first error: where is its location under
    `prefix` (body.k, options.hops)."""
    error = exc.errors()[0]
    where = ".".join(str(p) for p in (*prefix, *error.get("loc", ()))) or "body"
    return where, error.get("msg", "invalid")


def evidence_json(evidence: Evidence) -> dict[str, Any]:
    """What an answer is read from, as JSON: the method, the corpus, the reader and the chunks."""
    return {"method": evidence.result.method, "corpus": evidence.result.params.get("corpus"),
            "reader": evidence.reader.label, "chunks": [chunk_json(c) for c in evidence.chunks]}


def chunk_json(c: RetrievedChunk) -> dict[str, Any]:
    return {"chunk_id": c.chunk_id, "score": c.score, "rank": c.rank, "text": c.text, "document_id": c.document_id,
            "title": c.title, "source": c.source,
            "published_at": c.published_at.isoformat() if c.published_at else None, "parent_id": c.parent_id}


def result_json(result: RetrievalResult) -> dict[str, Any]:
    """A method's result as JSON: what `mhgraph query` prints, per hop."""
    return {"question": result.question, "method": result.method, "corpus": result.params.get("corpus"),
            "seconds": result.seconds, "phases": dict(result.phases),
            "params": json_safe(result.params),
            "diagnostics": [{"kind": d.kind, **json_safe(d.to_json())} for d in result.diagnostics],
            "hops": [{"index": h.index, "query": h.query, "filters": json_safe(h.filters), "seconds": h.seconds,
                      "chunks": [chunk_json(c) for c in h.chunks]} for h in result.hops]}


def json_safe(value: Any) -> Any:
    """`value` with what JSON cannot hold (dates, tuples, sets) made into what it can."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [json_safe(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)

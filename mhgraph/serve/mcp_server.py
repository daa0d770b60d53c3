"""The MCP server (`mhgraph mcp`): the tools an agent calls (search, ask, list_corpora,
explain_evidence) over the same shared resources as the HTTP API, on stdio or streamable HTTP.

A tool's one-line error (no such corpus, a bad option) reaches the agent as the tool's error."""

from __future__ import annotations

from typing import Annotated, Any, Callable, TypeVar

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from mhgraph import __version__, cypher
from mhgraph.answer.reader import heading, published
from mhgraph.errors import MhgraphError
from mhgraph.graph.corpora import list_corpora
from mhgraph.retrieval import registry
from mhgraph.serve.resources import Resources
from mhgraph.serve.schemas import evidence_json, result_json
from mhgraph.types import RetrievalResult

INSTRUCTIONS = ("Multi-hop evidence from a Neo4j knowledge graph of documents. list_corpora names the corpora; "
                "search returns the evidence per hop for a question; ask answers from it with numbered citations "
                "or abstains; explain_evidence shows the path from the question to the chunks and a Neo4j "
                "Browser query that draws it.")


T = TypeVar("T")
K = Annotated[int, Field(ge=1, le=100, description="Chunks per hop (ask: of the final ranking the reader gets).")]


async def in_thread(work: Callable[..., T], *args: Any) -> T:
    """`work(*args)` in a worker thread (searches block), its one-line error the tool's error."""
    try:
        return await anyio.to_thread.run_sync(work, *args)
    except MhgraphError as exc:
        raise ToolError(str(exc)) from None


def explanation(result: RetrievalResult, width: int = 200) -> str:
    """The path from the question to its evidence, hop by hop, and the Browser query that draws it."""
    lines = [f"Question: {result.question}",
             f"Method: {result.method} on corpus '{result.params.get('corpus')}', {len(result.hops)} hop(s), "
             f"{result.seconds * 1000:.0f} ms"]
    for record in result.diagnostics:   # what the method decided: its filter, chain, claims, tree
        lines += record.lines(result, width)
    ids: list[str] = []
    for hop in result.hops:
        query = repr(hop.query) if hop.query is not None else "(embeddings: each branch's next query)"
        lines.append(f"hop {hop.index}: query {query}, filters {hop.filters or '-'}")
        for c in hop.chunks:
            ids.append(c.chunk_id)
            parent = f", reached from chunk {c.parent_id}" if c.parent_id else ""
            text = " ".join(c.text.split())
            lines.append(f"  [{c.rank}] {c.score:.4f} {heading(c.title, c.source, published(c))} "
                         f"(chunk {c.chunk_id}{parent})")
            lines.append(f"      {text[:width]}{'...' if len(text) > width else ''}")
    unique = list(dict.fromkeys(ids))
    lines += ["", "Neo4j Browser (paste both lines):", f":param ids => {unique!r}",
              cypher.load("browser/evidence_chunks")]
    return "\n".join(lines)


def create_mcp(resources: Resources) -> MCPServer:
    """The MCP server over `resources`; run it with run_stdio / run_http."""
    server = MCPServer("mhgraph", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
    methods = ", ".join(registry.names())

    @server.tool(description=f"Evidence for a question, per hop, with scores. method: one of {methods}; k: chunks "
                             "per hop; corpus: default the server's (--corpus), else the graph's only one; options: "
                             "the method's options.")
    async def search(question: str, method: str = registry.DEFAULT_METHOD, k: K = 10, corpus: str | None = None,
                     options: dict[str, Any] | None = None) -> dict[str, Any]:
        result = await in_thread(resources.search, question, method, k, corpus, options)
        return result_json(result)

    @server.tool(description="An answer to a question from the evidence a method finds, with numbered citations "
                             "of the chunks it used, or an abstention ('Insufficient information.').")
    async def ask(question: str, method: str = registry.DEFAULT_METHOD, k: K = 10, corpus: str | None = None,
                  options: dict[str, Any] | None = None) -> dict[str, Any]:
        def answer() -> dict[str, Any]:
            evidence = resources.evidence(question, method, k, corpus, options)
            return {**evidence_json(evidence), "answer": evidence.reader.answer(question, evidence.chunks).to_json()}
        return await in_thread(answer)

    @server.tool(name="list_corpora",
                 description="The corpora in the graph, with their documents, chunks and embedding models.")
    async def corpora() -> list[dict[str, Any]]:
        found = await in_thread(list_corpora, resources.driver, resources.database)
        return [{"name": c.name, "documents": c.documents, "chunks": c.chunks, "sources": c.sources,
                 "embedding_models": list(c.embedding_models)} for c in found]

    @server.tool(description="The path from a question to its evidence as text, hop by hop (each chunk with its "
                             "document, source, date and the chunk it was reached from), and the Neo4j Browser "
                             "query that draws it.")
    async def explain_evidence(question: str, method: str = registry.DEFAULT_METHOD, k: K = 5,
                               corpus: str | None = None, options: dict[str, Any] | None = None) -> str:
        result = await in_thread(resources.search, question, method, k, corpus, options)
        return explanation(result)

    return server

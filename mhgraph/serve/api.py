"""The HTTP API (`mhgraph serve`): FastAPI routes over the shared resources, with the CLI's
methods, options and one-line errors (a missing corpus, method, run or job: 404; bad input: 422
naming the field; another refusal: 400). OpenAPI docs at /docs.

Routes are plain functions: FastAPI runs them in its worker threads, so a slow search does not
hold up the others."""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
from contextlib import asynccontextmanager
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, AsyncIterator, Iterator
from urllib.parse import urlsplit

import anyio
import anyio.to_thread
from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.middleware.trustedhost import TrustedHostMiddleware
from fastapi.responses import JSONResponse, StreamingResponse
from fastapi.security import APIKeyHeader
from neo4j.exceptions import Neo4jError, ServiceUnavailable, SessionExpired
from pydantic import ValidationError

from mhgraph import __version__
from mhgraph.app.ingestion import ingest_file
from mhgraph.config import check_corpus_name, check_key_rule
from mhgraph.errors import InputError, MhgraphError, NotFoundError
from mhgraph.eval import traces
from mhgraph.graph.corpora import list_corpora
from mhgraph.ingest.corpus import FORMATS, open_corpus
from mhgraph.retrieval import registry
from mhgraph.serve.auth import REFUSED, key_matches, key_sent
from mhgraph.serve.jobs import Jobs, staged_upload
from mhgraph.serve.resources import Resources
from mhgraph.serve.schemas import (
    AskRequest,
    IngestRequest,
    Job,
    QueryRequest,
    QueryResponse,
    error_at,
    evidence_json,
    result_json,
)

LOG = logging.getLogger("mhgraph.serve")
UPLOAD_FIELDS = ("corpus", "format", "document_key")
# the threads a stream's tokens are made in: apart from the request threads, which may all be
# waiting for the model a stream holds
STREAM_THREADS = anyio.CapacityLimiter(16)
# what a server with no key answers to: a page elsewhere cannot reach it by another host name
LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "[::1]", "::1"]
LOOPBACK_NAMES = {"127.0.0.1", "localhost", "::1"}
API_KEY_HEADER = APIKeyHeader(name="X-API-Key", auto_error=False,
                              description="The server's key (MHGRAPH_API_KEY); also accepted as 'Authorization: "
                                          "Bearer KEY'. Required when the server has one.")


def create_app(resources: Resources, *, api_key: str | None = None, cors_origins: tuple[str, ...] = (),
               uploads: Path | None = None, ingest_roots: tuple[Path, ...] = (),
               threads: int | None = None, host: str | None = None) -> FastAPI:
    """The API over `resources`. With `api_key`, every route but /health (and the docs) wants it;
    without, only loopback host names are answered. `cors_origins` may call it from a browser;
    uploaded corpus files are kept under `uploads` (default: a temporary folder); a file named in
    a request must lie under one of `ingest_roots`; `threads` requests are served at once
    (default: anyio's 40); `host` is the address it listens on (a loopback one is answered too)."""
    jobs = Jobs()
    upload_dir = uploads or Path(tempfile.mkdtemp(prefix="mhgraph-uploads-"))

    def authorised(request: Request, key: str | None = Depends(API_KEY_HEADER)) -> None:
        if api_key is not None and not key_matches(key_sent(request.headers), api_key):
            raise HTTPException(401, REFUSED, headers={"WWW-Authenticate": "Bearer"})

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if threads is not None:
            anyio.to_thread.current_default_thread_limiter().total_tokens = threads
        yield
        jobs.shutdown()
        resources.close()

    app = FastAPI(title="mhgraph", version=__version__, lifespan=lifespan,
                  description="Multi-hop retrieval over a Neo4j knowledge graph: evidence per hop, cited answers, "
                              "corpora, methods, evaluation runs and ingest jobs.")
    if api_key is None:
        # No key, so no stranger may call: a page elsewhere can neither reach it by a name of its
        # own that resolves here (DNS rebinding) nor post to it from its own origin (a form or a
        # fetch needs no permission to be sent); pages on this machine and --cors-origin's may.
        app.add_middleware(TrustedHostMiddleware, allowed_hosts=[*LOOPBACK_HOSTS, *([host] if host else [])])
        trusted = {*cors_origins}

        @app.middleware("http")
        async def same_machine_origin(request: Request, call_next: Any) -> Any:
            origin = request.headers.get("origin")
            if origin and origin not in trusted and urlsplit(origin).hostname not in LOOPBACK_NAMES:
                return JSONResponse({"detail": f"origin {origin} may not call this server (it has no API key): "
                                               f"start it with --cors-origin {origin}, or with a key"},
                                    status_code=403)
            return await call_next(request)
    if cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=list(cors_origins), allow_methods=["*"],
                           allow_headers=["*"])
    app.state.resources, app.state.jobs = resources, jobs
    guarded = [Depends(authorised)]

    @app.exception_handler(NotFoundError)
    def not_found(request: Request, exc: NotFoundError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=404)

    @app.exception_handler(InputError)
    def bad_input(request: Request, exc: InputError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=422)

    @app.exception_handler(MhgraphError)
    def refused(request: Request, exc: MhgraphError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=400)

    @app.exception_handler(Neo4jError)
    @app.exception_handler(ServiceUnavailable)
    @app.exception_handler(SessionExpired)
    def graph_failed(request: Request, exc: Exception) -> JSONResponse:
        # what Neo4j refused (e.g. a fulltext index being rebuilt) or could not be reached for
        message = " ".join(str(getattr(exc, "message", None) or exc).split())
        return JSONResponse({"detail": f"Neo4j: {message}"}, status_code=503)

    @app.exception_handler(RequestValidationError)
    def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"detail": ": ".join(error_at(exc)), "errors": json.loads(json.dumps(exc.errors(), default=str))},
                            status_code=422)

    @app.get("/health", summary="The server and its Neo4j connection")
    def health() -> dict[str, Any]:
        try:
            resources.driver.verify_connectivity()
        except Exception as exc:
            raise HTTPException(503, f"Neo4j is not reachable: {' '.join(str(exc).split())}") from None
        return {"status": "ok", "version": __version__}

    @app.get("/corpora", dependencies=guarded, summary="The corpora in the graph")
    def corpora() -> list[dict[str, Any]]:
        return [{"name": c.name, "documents": c.documents, "chunks": c.chunks, "sources": c.sources,
                 "files": list(c.files), "embedding_models": list(c.embedding_models),
                 "embed_headers": list(c.embed_headers),
                 "updated_at": c.updated_at.isoformat() if c.updated_at else None}
                for c in list_corpora(resources.driver, resources.database)]

    @app.get("/methods", dependencies=guarded, summary="The retrieval methods, each with its options' schema")
    def methods() -> list[dict[str, Any]]:
        return [{"name": spec.name, "description": spec.description, "extra": spec.extra,
                 "options": spec.options.model_json_schema()} for spec in registry.specs()]

    @app.post("/query", dependencies=guarded, response_model=QueryResponse,
              summary="Evidence per hop, with scores, parents and the method's diagnostics")
    def query(body: QueryRequest) -> dict[str, Any]:
        return result_json(resources.search(body.question, body.method, body.k, body.corpus, body.options))

    @app.post("/ask", dependencies=guarded, summary="An answer with citations, or an abstention",
              responses={200: {"content": {"text/event-stream": {}},
                               "description": "JSON; or with stream: true, server-sent events: 'evidence', "
                                              "'token' (repeated), 'answer'."}})
    def ask(body: AskRequest) -> Any:
        gathered = resources.evidence(body.question, body.method, body.k, body.corpus, body.options)
        reader, chunks, evidence = gathered.reader, gathered.chunks, evidence_json(gathered)
        if not body.stream:
            answer = reader.answer(body.question, chunks)
            return {**evidence, "answer": answer.to_json()}

        def events() -> Iterator[str]:
            yield sse("evidence", evidence)
            try:
                for piece in reader.stream(body.question, chunks):
                    if isinstance(piece, str):
                        yield sse("token", {"text": piece})
                    else:
                        yield sse("answer", piece.to_json())
            except MhgraphError as exc:   # the model failed after the response began: say so, in one line
                yield sse("error", {"detail": str(exc)})
            except Exception as exc:  # a crash after the 200: the client is told, the log keeps the trace
                LOG.exception("the answer stream failed")
                yield sse("error", {"detail": f"{type(exc).__name__}: the answer stream failed"})

        return StreamingResponse(streamed(events()), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    @app.get("/runs", dependencies=guarded, summary="The evaluation runs stored in the graph, newest first")
    def runs() -> list[dict[str, Any]]:
        return [{**r, "started_at": str(r["started_at"]) if r.get("started_at") is not None else None}
                for r in traces.list_runs(resources.driver, resources.database)]

    @app.get("/runs/{run_id}", dependencies=guarded, summary="One run's summary (its report.json)")
    def run(run_id: str) -> dict[str, Any]:
        stored = traces.run_summary(resources.driver, resources.database, run_id)
        if stored is None:
            raise NotFoundError(f"no run '{run_id}' in the graph (GET /runs lists them)")
        stale = traces.stale_runs(resources.driver, resources.database, [run_id])
        return {"id": run_id, "stale": run_id in stale, "stale_keys": stale.get(run_id, []),
                "summary": json.loads(stored)}

    @app.post("/ingest", dependencies=guarded, status_code=202, response_model=Job,
              summary="Ingest a corpus file, named (JSON) or uploaded (multipart 'file'), as a background job",
              openapi_extra={"requestBody": {"required": True, "content": {
                  "application/json": {"schema": IngestRequest.model_json_schema()},
                  "multipart/form-data": {"schema": {"type": "object", "required": ["file"], "properties": {
                      "file": {"type": "string", "format": "binary"}, "corpus": {"type": "string"},
                      "format": {"type": "string", "enum": list(FORMATS)},
                      "document_key": {"type": "string"}}}}}}})
    async def ingest(request: Request) -> dict[str, Any]:
        upload_name = staged = None
        content_type = request.headers.get("content-type", "")
        if content_type.startswith("multipart/form-data"):
            form = await request.form()
            upload = form.get("file")
            if upload is None or isinstance(upload, str):
                raise InputError("request", "file", "a multipart ingest needs the corpus file as 'file'")
            upload_name = Path(upload.filename or "corpus.json").name
            if not upload_name or upload_name.startswith("."):
                raise InputError("request", "file", f"file name {upload.filename!r}: give the file a plain name")
            unknown = sorted(set(form) - {"file", *UPLOAD_FIELDS})
            if unknown:   # `path` above all: an upload goes where the server keeps uploads, nowhere else
                raise InputError("request", unknown[0], f"not a field of an upload (fields: file, "
                                 f"{', '.join(UPLOAD_FIELDS)})")
            fields = {k: v for k, v in form.items() if k in UPLOAD_FIELDS and isinstance(v, str) and v}
            body = validated(IngestRequest, {"path": upload_name, **fields})   # before anything is written
            staged, target = staged_upload(upload_dir, upload_name)
            with staged.open("wb") as out:
                await anyio.to_thread.run_sync(shutil.copyfileobj, upload.file, out)
            body = body.model_copy(update={"path": str(target)})
        elif content_type.startswith("application/json"):
            try:
                payload = await request.json()
            except ValueError:
                raise InputError("request", "body", "not JSON: send {\"path\": ...} or a multipart upload") from None
            body = validated(IngestRequest, payload)
            # the file as resolved now is the file read: a link changed later cannot lead elsewhere
            body = body.model_copy(update={"path": str(allowed_file(Path(body.path), ingest_roots))})
        else:
            raise InputError("request", "content-type", "send application/json (a file named on the server) or "
                             "multipart/form-data (a file uploaded)")
        try:
            # the server's corpus is what searches default to; an ingest names its own, else the file does
            settings = replace(resources.settings, corpus=body.corpus,
                               **({"document_key": body.document_key} if body.document_key else {}))
            if body.corpus:
                check_corpus_name(body.corpus)
            if body.document_key:
                check_key_rule(body.document_key)
            # the CLI's first pass, before the job is queued: bad input is a 422 naming the line
            await anyio.to_thread.run_sync(check_file, staged or Path(body.path), body.format, settings.document_key)
        except InputError as exc:
            if staged is None:
                raise
            staged.unlink(missing_ok=True)
            raise InputError(upload_name, exc.where, exc.detail) from None   # the file as it was uploaded
        except MhgraphError as exc:   # a corpus name or key rule
            if staged is not None:
                staged.unlink(missing_ok=True)
            raise InputError("request", "body", str(exc)) from None

        def work(progress: Any) -> dict[str, Any]:
            path = Path(body.path)
            if staged is not None:
                staged.replace(path)
            done = ingest_file(settings, path, fmt=body.format, cache=resources.cache, progress=False,
                               on_progress=progress)
            s = done.summary
            return {"corpus": s.corpus, "documents": s.documents, "added": s.added, "replaced": s.replaced,
                    "unchanged": s.unchanged, "removed": s.removed, "chunks_written": s.written_chunks,
                    "seconds": round(s.seconds, 2), "lines": done.lines()}

        return asdict(jobs.submit("ingest", work))

    @app.get("/jobs", dependencies=guarded, response_model=list[Job], summary="The server's jobs")
    def all_jobs() -> list[dict[str, Any]]:
        return [asdict(j) for j in jobs.all()]

    @app.get("/jobs/{job_id}", dependencies=guarded, response_model=Job, summary="A job's status and progress")
    def job(job_id: str) -> dict[str, Any]:
        return asdict(jobs.get(job_id))

    return app


def validated(model: Any, payload: Any) -> Any:
    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        raise InputError("request", *error_at(exc, ("body",))) from None


def allowed_file(path: Path, roots: tuple[Path, ...]) -> Path:
    """`path` resolved, if it lies under one of the server's --ingest-root folders (none by
    default: then only uploads), so a request cannot read any file the server can."""
    try:
        resolved = path.resolve()
    except (OSError, ValueError) as exc:   # a NUL byte, a loop of links
        raise InputError("request", "body.path", f"not a usable path: {exc}") from None
    if not any(resolved.is_relative_to(root.resolve()) for root in roots):
        where = ", ".join(str(r) for r in roots) if roots else "none: start the server with --ingest-root DIR"
        raise InputError(path, "", f"not under an ingest root of this server ({where}); or upload the file")
    return resolved


def check_file(path: Path, fmt: str | None, key: str) -> None:
    """The corpus file's first pass (InputError at its first bad entry), as `mhgraph ingest` makes it."""
    if not path.is_file():
        raise InputError(path, "", "no such file on the server")
    open_corpus(path, fmt, key).check()


async def streamed(generator: Iterator[str]) -> AsyncIterator[str]:
    """`generator`'s items, each made in a worker thread (a model generates them), and the
    generator closed when the client leaves: a model lock it holds is let go then, not whenever
    the garbage collector gets to it. (The thread making an item finishes it first: to_thread
    waits for it even when cancelled.)"""
    done = object()
    try:
        while (item := await anyio.to_thread.run_sync(next, generator, done, limiter=STREAM_THREADS)) is not done:
            yield item
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(generator.close, limiter=STREAM_THREADS)


def sse(event: str, data: Any) -> str:
    """One server-sent event."""
    return f"event: {event}\ndata: {json.dumps(data, default=str)}\n\n"

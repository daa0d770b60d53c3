"""Background jobs of a server (ingests), one at a time in one worker thread, with their progress.

An ingest writes one document per transaction, so a job that fails (bad input is refused before
anything is written) or a server stopped mid-job leaves every document whole, as the CLI does."""

from __future__ import annotations

import dataclasses
import queue
import threading
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from mhgraph.errors import MhgraphError, NotFoundError


@dataclasses.dataclass
class JobState:
    id: str
    kind: str
    status: str = "queued"              # queued | running | done | failed
    done: int = 0
    total: int | None = None
    result: dict[str, Any] | None = None
    error: str | None = None
    started_at: str | None = None
    finished_at: str | None = None


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class Jobs:
    """Jobs run one after another (two ingests would compete for the same cores and corpus), in a
    daemon thread: a server that stops does not wait for a running ingest, which its per-document
    transactions leave whole."""

    def __init__(self) -> None:
        self._queue: queue.Queue[Callable[[], None] | None] = queue.Queue()
        self._jobs: dict[str, JobState] = {}
        self._lock = threading.Lock()
        self._worker = threading.Thread(target=self._work, name="mhgraph-jobs", daemon=True)
        self._worker.start()

    def _work(self) -> None:
        while (run := self._queue.get()) is not None:
            run()

    def submit(self, kind: str, work: Callable[[Callable[[int, int], None]], dict[str, Any]]) -> JobState:
        """Queue `work(progress)`; its return value becomes the job's result."""
        job = JobState(uuid.uuid4().hex[:12], kind)
        with self._lock:
            self._jobs[job.id] = job

        def progress(done: int, total: int) -> None:
            job.done, job.total = done, total

        def run() -> None:
            job.status, job.started_at = "running", _now()
            try:
                job.result = work(progress)
                job.status = "done"
            except MhgraphError as exc:
                job.error, job.status = str(exc), "failed"
            except Exception as exc:  # a job's failure is reported, the server goes on
                job.error, job.status = f"{type(exc).__name__}: {exc}", "failed"
            finally:
                job.finished_at = _now()

        self._queue.put(run)
        return job

    def get(self, job_id: str) -> JobState:
        with self._lock:
            if job_id not in self._jobs:
                raise NotFoundError(f"no job '{job_id}' (GET /jobs lists them)")
            return self._jobs[job_id]

    def all(self) -> list[JobState]:
        with self._lock:
            return list(self._jobs.values())

    def shutdown(self) -> None:
        """No job starts after this (a queued one stays 'queued'; the running one is cut off)."""
        while True:
            try:
                self._queue.get_nowait()
            except queue.Empty:
                break
        self._queue.put(None)


def staged_upload(folder: Path, filename: str | None) -> tuple[Path, Path]:
    """(where an uploaded corpus file is written now, where its job ingests it from). The job moves
    it to `folder/<its name>` when it starts: a file uploaded again under the same name is then the
    same file to the corpus, so its re-ingest replaces and removes articles as a file's does (and
    a queued upload does not overwrite the file a running job reads)."""
    name = Path(filename or "corpus.json").name or "corpus.json"
    staged = folder / ".staged" / f"{uuid.uuid4().hex[:12]}-{name}"
    staged.parent.mkdir(parents=True, exist_ok=True)
    return staged, folder / name

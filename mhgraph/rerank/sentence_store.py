"""`SentenceStore`: passages' sentences and their vectors under one embedding model, on disk.

The sentence reranker (`sentences:MODEL`) embeds every sentence of a passage the first time it
scores it: about 300 sentences for 30 candidates, over a second on two cores. Kept in an SQLite
file in the cache folder, they are embedded once per corpus, not once per process, and
`mhgraph reranker prepare` embeds a whole corpus's ahead of its questions, as ingest embeds its
chunks. A passage is keyed by the SHA-256 of its text, so a document updated or deleted leaves
nothing wrong behind (an edited chunk is a new key; an unused one is never read).
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import threading
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from mhgraph.errors import MhgraphError

# bump when the sentence splitting changes: stored passages were cut by the old one
LAYOUT = 1


def passage_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


def store_path(directory: Path, model_name: str) -> Path:
    """The store of `model_name` in `directory`: a readable name and a hash, so two models whose
    names differ only in characters a file name cannot hold get two files."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", model_name).strip("._")[-60:] or "model"
    digest = hashlib.sha256(model_name.encode("utf-8")).hexdigest()[:10]
    return Path(directory) / f"{readable}-{digest}.v{LAYOUT}.sqlite"


class SentenceStore:
    """Sentences (JSON) and their vectors (float32, row by row) per passage, in one SQLite file for
    one model. Safe to share between threads; several processes on one machine may write the same
    file (SQLite's locking and write-ahead log, which a network file system does not support).
    The file is found by the model's name: a local model retrained under the same path needs its
    file deleted (deleting one is always safe: it is filled again). A chunk edited, or a passage
    scored that no corpus holds, adds rows that nothing removes but `keep_only` (`mhgraph reranker
    prepare --prune`)."""

    def __init__(self, path: Path, model_name: str) -> None:
        self.path = Path(path)
        self.model_name = model_name
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=60, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS model (name TEXT NOT NULL)")
            self._db.execute("CREATE TABLE IF NOT EXISTS passages (key BLOB PRIMARY KEY, sentences TEXT NOT NULL, "
                             "vectors BLOB NOT NULL, dimensions INTEGER NOT NULL) WITHOUT ROWID")
            names = [r[0] for r in self._db.execute("SELECT name FROM model")]
            if not names:
                self._db.execute("INSERT INTO model (name) VALUES (?)", (model_name,))
        except (OSError, sqlite3.Error) as exc:
            self._close_quietly()
            raise MhgraphError(f"{self.path}: cannot open the sentence store: {exc}") from exc
        if names and names[0] != model_name:
            self._db.close()
            raise MhgraphError(f"{self.path}: holds the sentences of model '{names[0]}', not '{model_name}'")

    def _close_quietly(self) -> None:
        db = getattr(self, "_db", None)
        if db is not None:
            db.close()

    @classmethod
    def for_model(cls, directory: Path, model_name: str) -> SentenceStore:
        return cls(store_path(directory, model_name), model_name)

    def get(self, passages: Iterable[str]) -> dict[str, tuple[list[str], np.ndarray]]:
        """The stored sentences and vectors of those `passages` the store holds."""
        by_key = {passage_key(p): p for p in passages}
        found: dict[str, tuple[list[str], np.ndarray]] = {}
        for key, texts, blob, dimensions in self._rows("key, sentences, vectors, dimensions", list(by_key)):
            vectors = (np.frombuffer(blob, dtype="<f4").reshape(-1, dimensions) if dimensions
                       else np.zeros((0, 0), dtype=np.float32))
            found[by_key[key]] = (json.loads(texts), vectors)
        return found

    def held(self, passages: Iterable[str]) -> set[str]:
        """Those `passages` the store holds, read by key alone (not their vectors)."""
        by_key = {passage_key(p): p for p in passages}
        return {by_key[key] for (key,) in self._rows("key", list(by_key))}

    def _rows(self, columns: str, keys: list[bytes]) -> list[tuple]:
        rows: list[tuple] = []
        with self._lock:
            # SQLite binds at most 999 values a statement in old builds
            for start in range(0, len(keys), 500):
                part = keys[start:start + 500]
                try:
                    rows += self._db.execute(f"SELECT {columns} FROM passages "
                                             f"WHERE key IN ({', '.join('?' * len(part))})", part).fetchall()
                except sqlite3.Error as exc:
                    raise MhgraphError(f"{self.path}: cannot read the sentence store: {exc}") from exc
        return rows

    def put(self, items: Mapping[str, tuple[Sequence[str], np.ndarray]]) -> None:
        """Store each passage's sentences and their vectors (one row per sentence)."""
        rows = []
        for passage, (texts, vectors) in items.items():
            array = np.ascontiguousarray(vectors, dtype="<f4")
            dimensions = array.shape[1] if array.ndim == 2 and array.shape[0] else 0
            rows.append((passage_key(passage), json.dumps(list(texts)), array.tobytes(), dimensions))
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.executemany("INSERT OR REPLACE INTO passages (key, sentences, vectors, dimensions) "
                                     "VALUES (?, ?, ?, ?)", rows)
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise MhgraphError(f"{self.path}: cannot write to the sentence store: {exc}") from exc
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise

    def keep_only(self, keys: set[bytes]) -> int:
        """Delete every stored passage whose key (passage_key) is not in `keys` and give the file
        the space back; the number deleted. A passage stored meanwhile by another process stays.
        While another process reads the file, the space comes back at a later prune (a warning)."""
        with self._lock:
            try:
                gone = [(key,) for (key,) in self._db.execute("SELECT key FROM passages") if key not in keys]
                if gone:
                    self._db.execute("BEGIN IMMEDIATE")
                    self._db.executemany("DELETE FROM passages WHERE key = ?", gone)
                    self._db.execute("COMMIT")
            except BaseException as exc:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise MhgraphError(f"{self.path}: cannot prune the sentence store: {exc}") from exc
                raise
            # compacted every time, so that a prune after one another process held up gives the space back
            try:
                self._db.execute("VACUUM")
                busy = self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
            except sqlite3.Error as exc:
                busy, reason = 1, str(exc)
            else:
                reason = "another process is reading it"
            if busy:
                warnings.warn(f"{self.path}: {len(gone)} passages deleted, but the file keeps the space of what was "
                              f"deleted for now ({reason}): a later prune gives it back", stacklevel=2)
        return len(gone)

    def size(self) -> int:
        """Bytes on disk: the file and its write-ahead log."""
        return sum(p.stat().st_size for p in (self.path, self.path.with_name(self.path.name + "-wal")) if p.exists())

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM passages").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()

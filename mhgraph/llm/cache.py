"""Responses on disk, keyed by (backend, model, messages, parameters): a re-run makes no calls and
gets the same text. SQLite, so eval's worker threads and separate runs can share it."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from dataclasses import asdict
from pathlib import Path
from typing import Any, Sequence

from mhgraph.llm.base import Completion


def cache_key(backend: str, model: str, messages: Sequence[Any], params: dict[str, Any]) -> str:
    payload = json.dumps({"backend": backend, "model": model, "messages": list(messages), "params": params},
                         sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()


class ResponseCache:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, timeout=30)
        with self._lock, self._db:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, completion TEXT NOT NULL)")

    def get(self, key: str) -> Completion | None:
        with self._lock:
            row = self._db.execute("SELECT completion FROM responses WHERE key = ?", (key,)).fetchone()
        return Completion(**json.loads(row[0])) if row else None

    def put(self, key: str, completion: Completion) -> None:
        with self._lock, self._db:
            self._db.execute("INSERT OR REPLACE INTO responses (key, completion) VALUES (?, ?)",
                             (key, json.dumps(asdict(completion))))

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()

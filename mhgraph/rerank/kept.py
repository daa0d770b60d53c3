"""`KeptPassages`: what a reranker computed of each passage, kept in memory within a bound, since
a chunk comes back for many questions (a passage's vector, its sentences and theirs)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from typing import Generic, TypeVar

Value = TypeVar("Value")


class KeptPassages(Generic[Value]):
    """Values by passage, the most recently used last; each weighs `weigh(value)` (at least 1), and
    past `bound` in all the least recently used are dropped, after a call has taken its own."""

    def __init__(self, bound: int, weigh: Callable[[Value], int] = lambda _: 1) -> None:
        self.bound = bound
        self.size = 0
        self._weigh = weigh
        self._values: OrderedDict[str, Value] = OrderedDict()
        # an evaluation's workers share one reranker: the bookkeeping is locked, not the computing
        self._lock = threading.Lock()

    def take(self, passages: Sequence[str],
             compute: Callable[[list[str]], dict[str, Value]]) -> dict[str, Value]:
        """Each distinct passage's value: kept ones as they are, the others from
        `compute(missing passages)`, then kept."""
        wanted = list(dict.fromkeys(passages))
        with self._lock:
            found = {p: self._values[p] for p in wanted if p in self._values}
        missing = [p for p in wanted if p not in found]
        found.update(compute(missing) if missing else {})
        with self._lock:
            for passage in wanted:
                if passage in self._values:        # kept, or kept meanwhile by another thread
                    self.size -= self._weight(self._values.pop(passage))
                self._values[passage] = found[passage]
                self.size += self._weight(found[passage])
            while self.size > self.bound and self._values:
                _, dropped = self._values.popitem(last=False)
                self.size -= self._weight(dropped)
        return found

    def _weight(self, value: Value) -> int:
        return max(1, self._weigh(value))

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

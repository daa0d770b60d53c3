"""What a reranker keeps of each passage (mhgraph/rerank/kept.py): computed once, the most
recently used kept within a bound counted by weight, a call's own values taken before any drop."""

from __future__ import annotations

from mhgraph.rerank.kept import KeptPassages


def test_passages_are_computed_once_and_the_least_recently_used_dropped_past_the_bound() -> None:
    computed: list[list[str]] = []

    def lengths(missing: list[str]) -> dict[str, int]:
        computed.append(missing)
        return {p: len(p) for p in missing}

    kept: KeptPassages[int] = KeptPassages(bound=5, weigh=lambda n: n)
    assert kept.take(["ab", "c", "ab"], lengths) == {"ab": 2, "c": 1}
    assert computed == [["ab", "c"]] and kept.size == 3         # a repeated passage is computed once
    assert kept.take(["c", "ab"], lengths) == {"c": 1, "ab": 2} and len(computed) == 1
    # "c" was used before "ab": the new passage pushes it out first
    assert kept.take(["defg"], lengths) == {"defg": 4}
    assert list(kept) == ["defg"] and kept.size == 4           # 2 + 4 > 5: "ab" went too
    # one call weighing more than the bound still gets every value it asked for
    assert kept.take(["hijkl", "mnopqr"], lengths) == {"hijkl": 5, "mnopqr": 6}
    assert kept.size <= 5 and len(kept) <= 1


def test_a_value_weighing_nothing_still_counts_one() -> None:
    kept: KeptPassages[list[str]] = KeptPassages(bound=2, weigh=len)
    kept.take(["", " ", "x"], lambda missing: {p: [] for p in missing})
    assert kept.size == 2 and list(kept) == [" ", "x"]

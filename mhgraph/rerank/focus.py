"""Passage excerpts for a cross-encoder cut to a token limit: the run of sentences that holds the
most of the question.

A cross-encoder cut to N tokens reads the question and a passage's first tokens up to N; in a
256-token chunk the sentence that answers the question is as likely to lie past the cut, so a
shorter cut (faster on a slow CPU) loses what the pair was for. With focus, a passage longer than
the room the question leaves is replaced by its run of consecutive sentences, fitting that room,
whose content words hold the most of the question's, each word weighted by its inverse frequency
over the sentences of the passages being scored (the sentence reranker's lexical weights,
sentence_windows.py). A passage that fits is read whole; a tie (no word shared) keeps the earliest
run, the passage's start, as a plain cut reads it. Training-free: one tokenization of the
sentences, no embedding. Measured on MultiHop-RAG, with cross-encoders trained on passage starts,
it loses at every cut tried (bench/results/rerank-avx2-cpu-kfold-onnx-focus-20-multihop-rag.md),
so it is off by default.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence

from mhgraph.text import content_words, sentences

# what a reranker's name adds when it reads focused passages
FOCUS_LABEL = " (focused passages)"
# the tokens each text holds, without special tokens, for a batch of texts
CountTokens = Callable[[Sequence[str]], list[int]]


def focused(question: str, passages: Sequence[str], room: int, count_tokens: CountTokens) -> list[str]:
    """`passages`, each one longer than `room` tokens replaced by its best run of sentences (module
    docstring) of at most `room` tokens (a first sentence longer than that is the run alone: the
    tokenizer's cut then ends it)."""
    lengths = count_tokens(passages)
    long = [i for i, n in enumerate(lengths) if n > room]
    if not long or room < 1:
        return list(passages)
    asked = set(content_words(question))
    parts = {i: sentences(passages[i]) for i in long}
    flat = [s for i in long for s in parts[i]]
    sentence_tokens = iter(count_tokens(flat))
    held = {i: [asked & set(content_words(s)) for s in parts[i]] for i in long}
    frequency = Counter(w for i in long for words in held[i] for w in words)
    n = len(flat)
    idf = {w: math.log((n + 1) / (f + 0.5)) for w, f in frequency.items()}
    out = list(passages)
    for i in long:
        tokens = [next(sentence_tokens) for _ in parts[i]]
        start, end = _best_run(held[i], tokens, idf, room)
        out[i] = " ".join(parts[i][start:end])
    return out


def _best_run(words: Sequence[set[str]], tokens: Sequence[int], idf: dict[str, float], room: int) -> tuple[int, int]:
    """(start, end) of the run of sentences fitting `room` tokens whose words' idf sum is highest;
    the earliest on a tie."""
    best, best_score = (0, 1), -1.0
    for start in range(len(words)):
        end, used, union = start, 0, set()
        while end < len(words) and (end == start or used + tokens[end] <= room):
            used += tokens[end]
            union |= words[end]
            end += 1
        score = sum(idf[w] for w in union)
        if score > best_score:
            best, best_score = (start, end), score
    return best

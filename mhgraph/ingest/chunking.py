"""Token windows over an article, counted with the embedding model's own tokenizer.

A chunk is a window of `size` tokens; consecutive windows share `overlap` tokens. The chunk's text
is the exact slice of the article between its first and last token, so a quote from the article
that lies inside the window is found verbatim in the chunk.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ChunkSpan:
    index: int
    start_char: int
    end_char: int
    token_count: int
    text: str


class TokenChunker:
    def __init__(self, tokenizer: Any, size: int = 256, overlap: int = 32) -> None:
        if not 0 <= overlap < size:
            raise ValueError(f"overlap must be in [0, size): got size={size}, overlap={overlap}")
        if not getattr(tokenizer, "is_fast", False):
            raise ValueError("the embedding model's tokenizer must be a fast tokenizer (it gives character offsets)")
        self.tokenizer = tokenizer
        self.size = size
        self.overlap = overlap

    def windows(self, n_tokens: int) -> list[tuple[int, int]]:
        """Token index ranges [start, end) covering n_tokens."""
        if n_tokens == 0:
            return []
        step = self.size - self.overlap
        spans, start = [], 0
        while True:
            end = min(start + self.size, n_tokens)
            spans.append((start, end))
            if end == n_tokens:
                return spans
            start += step

    def split(self, text: str) -> list[ChunkSpan]:
        enc = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
        offsets = [(s, e) for s, e in enc["offset_mapping"]]
        chunks = []
        for index, (start, end) in enumerate(self.windows(len(offsets))):
            start_char, end_char = offsets[start][0], offsets[end - 1][1]
            chunks.append(ChunkSpan(index, start_char, end_char, end - start, text[start_char:end_char]))
        return chunks

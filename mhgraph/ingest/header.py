"""The metadata an ingest embeds above each chunk's text (the `embed_header` setting).

MultiHop-RAG's reference pipeline (LlamaIndex) embedded every chunk with its document's metadata
in LlamaIndex's default template: one "key: value" line per field, a blank line, then the text.
mhgraph does the same when asked: only the vector sees the header; the Chunk's stored text, its
span and the chunking stay the chunk's own, so every setting stores the same chunks and the gold
mapping of an evaluation does not change. The header takes tokens from the embedder's window
(about 25 for title, source and date with MiniLM's 256), so a chunk's last tokens may go unseen
by the embedder; the overlap with the next chunk keeps them in the index.
"""

from __future__ import annotations

from mhgraph.config import EMBED_HEADERS
from mhgraph.ingest.corpus import Article

# each mode's fields, in the order they are written
FIELDS: dict[str, tuple[str, ...]] = {
    "none": (),
    "title": ("title",),
    "title+source+date": ("title", "source", "published_at"),
}
assert tuple(FIELDS) == EMBED_HEADERS


def header(article: Article, mode: str) -> str:
    """The header lines of `article` for `mode` (empty for "none"); a field the article lacks is left out."""
    try:
        fields = FIELDS[mode]
    except KeyError:
        raise ValueError(f"embed_header: expected one of {', '.join(EMBED_HEADERS)}, got {mode!r}") from None
    values = {"title": article.title, "source": article.source,
              "published_at": article.published_at.date().isoformat() if article.published_at else None}
    return "\n".join(f"{name}: {values[name]}" for name in fields if values[name])


def text_to_embed(article: Article, chunk_text: str, mode: str) -> str:
    """What the embedder reads for one chunk: the header, a blank line, the chunk (or the chunk alone)."""
    head = header(article, mode)
    return f"{head}\n\n{chunk_text}" if head else chunk_text

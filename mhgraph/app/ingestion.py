"""Ingest a corpus file and keep its claim layer whole (`mhgraph ingest`, a server's ingest job)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from mhgraph.app.claim_layer import ClaimLayerBuild, build_claim_layer, has_claim_layer
from mhgraph.config import Settings
from mhgraph.graph.connection import connect
from mhgraph.ingest.pipeline import IngestSummary, ingest_corpus


@dataclass
class Ingested:
    summary: IngestSummary
    claims: ClaimLayerBuild | None = None    # the claim layer built or refreshed after it

    def lines(self) -> list[str]:
        return [*self.summary.lines(), *(self.claims.lines() if self.claims else [])]


def ingest_file(settings: Settings, path: Path | str, *, fmt: str | None = None, batch_size: int = 32,
                overlap: bool = False, with_claims: bool = False, cache: bool = True, progress: bool = True,
                on_progress: Callable[[int, int], None] | None = None) -> Ingested:
    """Ingest `path` into settings.corpus (default: named after the file); with_claims builds the
    corpus's claim layer after. A corpus that has a claim layer keeps it whole: the documents
    written now get their claims (and only they: chunks a stopped 'claims build --limit' left are
    that command's to finish)."""
    with connect(settings) as driver:
        summary = ingest_corpus(path, settings, driver, fmt=fmt, batch_size=batch_size, overlap=overlap,
                                progress=progress, on_progress=on_progress)
    settings = dataclasses.replace(settings, corpus=summary.corpus)
    refresh = not with_claims and bool(summary.written_ids) and has_claim_layer(settings)
    claims = None
    if with_claims or refresh:
        claims = build_claim_layer(settings, cache=cache, progress=progress, only_new=refresh,
                                   documents=summary.written_ids if refresh else None)
    return Ingested(summary, claims)

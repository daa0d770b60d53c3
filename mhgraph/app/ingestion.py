"""Ingest corpus files and keep their claim layer whole (`mhgraph ingest`, a server's ingest job)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from mhgraph.app.claim_layer import ClaimLayerBuild, build_claim_layer, has_claim_layer
from mhgraph.config import Settings
from mhgraph.errors import MhgraphError
from mhgraph.graph.connection import connect
from mhgraph.ingest.corpus import open_corpus
from mhgraph.ingest.pipeline import IngestSummary, check_files, ingest_corpus
from mhgraph.ingest.ray_engine import RayIngestOptions, ingest_on_ray


@dataclass
class Ingested:
    summary: IngestSummary                   # the last (or only) ingest
    claims: ClaimLayerBuild | None = None    # the claim layer built or refreshed after it
    earlier: list[IngestSummary] = field(default_factory=list)   # the files ingested before it, in order

    def lines(self) -> list[str]:
        return [*(line for s in self.earlier for line in s.lines()), *self.summary.lines(),
                *(self.claims.lines() if self.claims else [])]


def ingest_file(settings: Settings, path: Path | str, **kwargs: object) -> Ingested:
    """Ingest one file (see ingest_files)."""
    return ingest_files(settings, [path], **kwargs)  # type: ignore[arg-type]


def ingest_files(settings: Settings, paths: Sequence[Path | str], *, fmt: str | None = None, batch_size: int = 32,
                 overlap: bool = False, with_claims: bool = False, cache: bool = True, progress: bool = True,
                 on_progress: Callable[[int, int], None] | None = None, engine: str = "local",
                 ray: RayIngestOptions | None = None) -> Ingested:
    """Ingest `paths` into settings.corpus (default, for one file: named after it); with_claims
    builds the corpus's claim layer after. engine "local" ingests the files one after the other in
    this process; "ray" runs them as one Ray Data job. A corpus that has a claim layer keeps it
    whole: the documents written now get their claims (and only they: chunks a stopped
    'claims build --limit' left are that command's to finish)."""
    if len(paths) > 1 and not settings.corpus:
        raise MhgraphError(f"{len(paths)} files go into one corpus: name it with --corpus NAME")
    summaries: list[IngestSummary] = []
    with connect(settings) as driver:
        if engine == "ray":
            options = dataclasses.replace(ray or RayIngestOptions(), batch_size=batch_size)
            summaries.append(ingest_on_ray(paths, settings, driver, fmt=fmt, options=options,   # type: ignore[arg-type]
                                           progress=progress, on_progress=on_progress))
        else:
            if len(paths) > 1:   # every file checked before any is written, as the Ray engine does
                check_files([open_corpus(p, fmt, settings.document_key) for p in paths], ordered=True)  # type: ignore[arg-type]
            for path in paths:
                summaries.append(ingest_corpus(path, settings, driver, fmt=fmt, batch_size=batch_size,  # type: ignore[arg-type]
                                               overlap=overlap, progress=progress, on_progress=on_progress))
    last = summaries[-1]
    written = [i for s in summaries for i in s.written_ids]
    settings = dataclasses.replace(settings, corpus=last.corpus)
    refresh = not with_claims and bool(written) and has_claim_layer(settings)
    claims = None
    if with_claims or refresh:
        claims = build_claim_layer(settings, cache=cache, progress=progress, only_new=refresh,
                                   documents=written if refresh else None)
    return Ingested(last, claims, summaries[:-1])

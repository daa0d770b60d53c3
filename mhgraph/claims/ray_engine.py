"""`mhgraph claims build --engine ray`: claim extraction spread over a Ray cluster.

The chunks still to do are listed here; Ray Data hands them in batches to a pool of workers, each
of which extracts, embeds and writes a batch in one transaction (claims/build.py's
ClaimBatchWriter, as the local engine does), so a batch Ray runs again after a worker died writes
the same claims (ids hash chunk, place and text) and a build stopped anywhere resumes. Merging
names and drawing synonyms run here after, over the whole layer.

Offline (the spaCy extractor), the workers share the cluster's CPUs. With a model, each worker is
bound to one of the OpenAI-compatible endpoints (vLLM, llama.cpp servers) and sends one request
at a time, so `per_endpoint` workers per endpoint bound each server's concurrency; the client
retries (llm_max_retries). The workers of one machine share its response cache (SQLite in
settings.cache_dir, which must not live on a network filesystem), keyed by the pool of endpoints
rather than the one that answered; a pool of one endpoint is keyed as a local build keys it.
"""

from __future__ import annotations

import pickle
import time
from dataclasses import dataclass
from typing import Any, Sequence

from tqdm import tqdm

from mhgraph.claims.build import (
    ClaimBatchWriter,
    ClaimsSummary,
    ensure_claim_schema,
    finish_claims,
    name_aliases,
    pending_chunks,
)
from mhgraph.claims.extract import LLMClaimExtractor, OfflineClaimExtractor
from mhgraph.claims.merge import DEFAULT_THRESHOLD
from mhgraph.config import Settings
from mhgraph.embeddings import TextEmbedder, load_embedder
from mhgraph.engine.ray_cluster import import_ray, ray_cluster, worker_settings
from mhgraph.graph.connection import connect
from mhgraph.graph.context import GraphContext
from mhgraph.llm import Usage, load_llm


@dataclass(frozen=True)
class RayClaimsOptions:
    address: str | None = None           # Ray's address (None: RAY_ADDRESS, else a Ray started here)
    workers: int | None = None           # offline workers (None: one per CPU of the cluster)
    endpoints: tuple[str, ...] = ()      # with a model: its OpenAI-compatible servers (default: the configured one)
    per_endpoint: int = 2                # with a model: requests in flight per endpoint


@dataclass
class PooledModel:
    """What answered the workers' requests, and what it cost, summed over the workers."""

    label: str
    usage: Usage


class EndpointLeases:
    """A Ray actor handing each new worker the endpoint that has the fewest workers (a worker Ray
    restarts takes a new lease; the dead one's is not given back, so a long job's balance drifts)."""

    def __init__(self, endpoints: Sequence[str]) -> None:
        self.holders = {endpoint: 0 for endpoint in endpoints}

    def take(self) -> str:
        endpoint = min(self.holders, key=lambda e: self.holders[e])
        self.holders[endpoint] += 1
        return endpoint


class ClaimStage:
    """Ray Data stage (one per actor): extract, embed and write the claims of a batch of chunks."""

    def __init__(self, settings: Settings, embedding_model: str, merged: dict[str, dict[str, str]], leases: Any,
                 pool: str | None, cache: bool) -> None:
        import ray

        self.driver = connect(settings)
        graph = GraphContext.open(self.driver, settings.neo4j_database, settings.corpus)
        self.llm = None if leases is None else load_llm(
            settings, cache=cache, endpoint=ray.get(leases.take.remote()) or None, identity=pool)
        extractor = OfflineClaimExtractor() if self.llm is None else LLMClaimExtractor(self.llm)
        self.write = ClaimBatchWriter(self.driver, graph.database, graph.corpus, extractor,
                                      load_embedder(embedding_model, settings.cache_dir), merged)

    def __call__(self, batch: dict[str, Any]) -> dict[str, list]:
        before = dict(self.write.timing)
        calls = self.llm.usage.copy() if self.llm is not None else Usage()
        rows = [{"chunk_id": str(c), "document_id": str(d), "text": str(t), "title": str(h)}
                for c, d, t, h in zip(batch["chunk_id"], batch["document_id"], batch["text"], batch["title"])]
        claims = self.write(rows)
        spent = self.llm.usage.since(calls) if self.llm is not None else Usage()
        return {"chunks": [len(rows)], "claims": [claims],
                **{f"seconds_{k}": [self.write.timing[k] - before[k]] for k in before},
                "usage": [pickle.dumps(spent, protocol=5)]}


def build_claims_on_ray(settings: Settings, driver: Any, corpus: str, embedder: TextEmbedder, *,
                        options: RayClaimsOptions, use_model: bool, model_label: str = "", batch_size: int = 32,
                        limit: int | None = None, merge_threshold: float | None = DEFAULT_THRESHOLD,
                        cache: bool = True, progress: bool = True, only_new: bool = False,
                        documents: Sequence[str] | None = None, extractor_label: str) -> tuple[ClaimsSummary,
                                                                                                PooledModel | None]:
    """The claims of every chunk of `corpus` still to do, extracted by Ray workers (see the module
    docstring); then names merged and synonyms drawn here."""
    started = time.perf_counter()
    database = settings.neo4j_database
    ensure_claim_schema(driver, database, embedder.dimensions)
    pending = pending_chunks(driver, database, corpus, extractor_label, limit=limit, only_new=only_new,
                             documents=documents)
    merged = name_aliases(driver, database, corpus)
    # "" stands for the configured endpoint (OPENAI_BASE_URL, else the client's default)
    endpoints = list(options.endpoints) or [settings.openai_base_url or ""]
    shared = worker_settings(settings, corpus)
    # one endpoint is the configured model's own (a local build's cache answers it); several name the pool
    pool = "endpoints:" + ",".join(sorted(endpoints)) if len(endpoints) > 1 else None
    timing = {"extract": 0.0, "embed": 0.0, "write": 0.0}
    usage = Usage()
    ray = import_ray()
    with ray_cluster(options.address) as cluster, \
            tqdm(total=len(pending), desc=f"claims ({extractor_label}, ray)", unit="chunk",
                 disable=not progress) as bar:
        if pending:
            leases = ray.remote(EndpointLeases).remote(endpoints) if use_model else None
            workers = len(endpoints) * options.per_endpoint if use_model else \
                options.workers or max(1, int(cluster.cpus))
            # a model's workers wait on their servers: they take little of this cluster's CPU
            cpus = 0.1 if use_model else cluster.cpus_per_worker(workers, reserved=0.0)
            data = ray.data.from_items([{"chunk_id": r["chunk_id"], "document_id": r["document_id"],
                                         "text": r["text"], "title": r["title"] or ""} for r in pending],
                                       override_num_blocks=max(1, -(-len(pending) // batch_size)))   # a block per batch
            data = data.map_batches(ClaimStage, batch_size=batch_size, compute=ray.data.ActorPoolStrategy(size=workers),
                                    num_cpus=cpus, fn_constructor_kwargs={"settings": shared, "merged": merged,
                                                                          "embedding_model": embedder.model_name,
                                                                          "leases": leases, "pool": pool,
                                                                          "cache": cache})
            for rows in data.iter_batches(batch_size=None, batch_format="numpy"):
                for k in timing:
                    timing[k] += float(sum(rows[f"seconds_{k}"]))
                for spent in rows["usage"]:
                    usage.add(pickle.loads(spent))
                bar.update(int(sum(rows["chunks"])))
    summary = finish_claims(driver, database, corpus, extractor_label, embedder, pending=len(pending), timing=timing,
                            started=started, merge_threshold=merge_threshold, only_new=only_new)
    model = None
    if use_model:
        model = PooledModel(f"{model_label} on {len(endpoints)} endpoints", usage)
    return summary, model

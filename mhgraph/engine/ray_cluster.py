"""Joining a Ray cluster for a command run with `--engine ray`.

The address is Ray's own: `--address` (host:port of a cluster's head, or `auto`), else the
RAY_ADDRESS environment variable, else a Ray instance started for this command on this machine and
stopped after it. Every node must have mhgraph installed (the same version) and see the input files
at the same paths; the Neo4j server must be reachable from every node.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator

from mhgraph.config import Settings
from mhgraph.errors import MhgraphError
from mhgraph.graph.connection import credentials

# A Ray started here keeps its object store small: batches stream through it, none is held.
LOCAL_OBJECT_STORE_BYTES = 1 << 30
# How long a job waits for its workers to be placed (e.g. a node still joining) before it fails.
WORKERS_WAIT_SECONDS = 600
BLOCK_BYTES = 1 << 20


@dataclass(frozen=True)
class ClusterResources:
    cpus: float
    gpus: float
    nodes: int
    node_cpus: tuple[float, ...] = ()   # each live node's CPUs: a worker needs its share on one node

    def cpus_per_worker(self, workers: int, reserved: float) -> float:
        """An equal share of the CPUs left after `reserved` (the light stages), per worker, cut to
        the largest share for which the nodes hold `workers` such workers (a worker asking for
        more than any node can give would wait for ever)."""
        share = max(0.1, (self.cpus - reserved) / workers)
        if not self.node_cpus:
            return share
        fits = [c for c in {n / k for n in self.node_cpus for k in range(1, workers + 1)} | {share}
                if c <= share and sum(int(n // c + 1e-9) for n in self.node_cpus) >= workers]
        return max(fits, default=0.1)


def worker_settings(settings: Settings, corpus: str) -> Settings:
    """The settings a job's workers run with: the corpus resolved here, and the server and the
    credentials this machine resolved (the local server's password file is here, not on the workers)."""
    user, password = credentials(settings)
    return dataclasses.replace(settings, corpus=corpus, neo4j_uri=settings.uri, neo4j_username=user,
                               neo4j_password=password)


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise MhgraphError("--engine ray needs Ray: pip install 'mhgraph[ray]'") from None
    return ray


@contextmanager
def ray_cluster(address: str | None = None) -> Iterator[ClusterResources]:
    """Connected to the cluster at `address` (see the module docstring) for the block's duration."""
    ray = import_ray()
    # "local": a new Ray for this command, never (as Ray's own default would) a cluster that
    # 'ray start' left running on this machine
    address = address or os.environ.get("RAY_ADDRESS") or "local"
    joined_here = not ray.is_initialized()
    if joined_here:
        local = address == "local"
        try:
            ray.init(address=address, ignore_reinit_error=True, include_dashboard=False, log_to_driver=False,
                     logging_level=logging.ERROR, configure_logging=True,
                     **({"object_store_memory": LOCAL_OBJECT_STORE_BYTES} if local else {}))
        except (ConnectionError, RuntimeError, ValueError) as exc:
            where = "Ray could not start on this machine" if local else f"no Ray cluster at {address}"
            raise MhgraphError(f"{where}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from exc
        _quiet_progress(ray)
    try:
        resources = ray.cluster_resources()
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        yield ClusterResources(cpus=float(resources.get("CPU", 0)), gpus=float(resources.get("GPU", 0)),
                               nodes=len(nodes), node_cpus=tuple(float(n["Resources"].get("CPU", 0)) for n in nodes))
    finally:
        if joined_here:
            ray.shutdown()


def _quiet_progress(ray: Any) -> None:
    """mhgraph draws one bar over the whole job: Ray Data's own per-operator bars are turned off."""
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.enable_operator_progress_bars = False
    context.print_on_execution_start = False
    # a worker pool that cannot be placed fails after this long rather than waiting for ever
    context.wait_for_min_actors_s = WORKERS_WAIT_SECONDS
    # Blocks stay small: a read task's output (a file's articles) is cut into blocks of about this
    # size, so every worker gets some and the writers start on the first, however large the file.
    # (Ray Data's repartition would do it as a task asking a whole CPU, which the workers hold.)
    context.target_max_block_size = BLOCK_BYTES

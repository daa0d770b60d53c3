"""Joining a Ray cluster for a command run with `--engine ray`.

The address is Ray's own: `--address` (host:port of a cluster's head, or `auto`), else the
RAY_ADDRESS environment variable, else a Ray instance started for this command on this machine and
stopped after it. Every node must have mhgraph installed (the same version) and see the input files
at the same paths; the Neo4j server must be reachable from every node.
"""

from __future__ import annotations

import logging
import os
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator

from mhgraph.errors import MhgraphError

# A Ray started here keeps its object store small: batches stream through it, none is held.
LOCAL_OBJECT_STORE_BYTES = 1 << 30


@dataclass(frozen=True)
class ClusterResources:
    cpus: float
    gpus: float
    nodes: int
    largest_node_cpus: float    # a worker needs its CPUs on one node

    def cpus_per_worker(self, workers: int, reserved: float) -> float:
        """An equal share of the CPUs left after `reserved` (the light stages), per worker, no
        more than one node has (a worker asking for more would wait for ever)."""
        return max(0.1, min((self.cpus - reserved) / workers, self.largest_node_cpus))


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
    address = address or os.environ.get("RAY_ADDRESS") or None
    joined_here = not ray.is_initialized()
    if joined_here:
        local = address is None
        try:
            ray.init(address=address, ignore_reinit_error=True, include_dashboard=False, log_to_driver=False,
                     logging_level=logging.ERROR, configure_logging=True,
                     **({"object_store_memory": LOCAL_OBJECT_STORE_BYTES} if local else {}))
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise MhgraphError(f"no Ray cluster at {address}: {str(exc).splitlines()[0] if str(exc) else exc}") \
                from exc
        _quiet_progress(ray)
    try:
        resources = ray.cluster_resources()
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        yield ClusterResources(cpus=float(resources.get("CPU", 0)), gpus=float(resources.get("GPU", 0)),
                               nodes=len(nodes),
                               largest_node_cpus=max((float(n["Resources"].get("CPU", 0)) for n in nodes), default=0.0))
    finally:
        if joined_here:
            ray.shutdown()


def _quiet_progress(ray: Any) -> None:
    """mhgraph draws one bar over the whole job: Ray Data's own per-operator bars are turned off."""
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.enable_operator_progress_bars = False
    context.print_on_execution_start = False

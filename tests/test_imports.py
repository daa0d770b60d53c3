"""What the CLI's modules import when `mhgraph --help` loads them: not the Neo4j driver (which
brings pandas along) nor numpy, which the commands load when they run."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO

HEAVY = ("neo4j", "numpy", "pandas", "torch", "transformers", "sentence_transformers")


def test_claims_options_and_embedder_interface_load_light() -> None:
    code = ("import sys, mhgraph.claims.merge, mhgraph.embeddings; "
            f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == []

#!/usr/bin/env bash
# The test suite on a fresh machine: installs what it needs, then runs pytest against a real
# Neo4j server that the tests install and start themselves (ports 17687/17474).
# Two tiers: `bash scripts/test.sh -m "not neo4j"` runs only the tests that need no server
# (tests/conftest.py marks the others `neo4j`); with no arguments it runs both.
MHGRAPH_EXTRAS="[test,rerank,claims,serve,ray]"
source "$(dirname "$0")/env.sh"
apt_install chromium chromium
bash scripts/build-llama-cpp.sh   # the local LLM backend's tests need it (built once, then cached)
python -m pytest "$@"

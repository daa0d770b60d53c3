#!/usr/bin/env bash
# The main job on a fresh machine: install everything, start the local Neo4j, ingest the
# bundled sample corpus, print the summary and how to open Neo4j Browser.
source "$(dirname "$0")/env.sh"
mhgraph quickstart "$@"

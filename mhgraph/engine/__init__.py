"""Where a command's work runs: `local` (this process, the default) or `ray` (a Ray cluster, the
`mhgraph[ray]` extra): ingest, claim extraction and evaluation take `--engine`."""

ENGINES = ("local", "ray")

"""Question synthesis: a multi-hop benchmark with verified evidence from any corpus (`mhgraph generate`)."""

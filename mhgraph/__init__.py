"""mhgraph: multi-hop retrieval-augmented QA over a Neo4j knowledge graph."""

__version__ = "0.1.0"

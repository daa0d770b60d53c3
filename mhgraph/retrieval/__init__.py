"""Retrieval methods, one module each, behind `mhgraph.retrieval.base.Retriever`."""

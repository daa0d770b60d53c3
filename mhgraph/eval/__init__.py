"""Evaluation on MultiHop-RAG: gold matching, metrics, reports, traces."""

"""Corpus -> Source / Document / Chunk graph with embeddings, vector and fulltext indexes."""

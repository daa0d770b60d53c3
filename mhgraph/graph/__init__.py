"""Connecting to Neo4j, what the server supports, and the lexical-graph schema."""

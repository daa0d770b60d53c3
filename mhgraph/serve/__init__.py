"""mhgraph as a service: an HTTP API (`mhgraph serve`, FastAPI on uvicorn) and an MCP server
(`mhgraph mcp`, the mcp SDK), both over the same shared resources (one pooled Neo4j driver, every
model loaded once) and the same methods, options and one-line errors as the command line."""

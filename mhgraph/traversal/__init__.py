"""Graph traversal over the claim layer: the graph HippoRAG 2 walks, built from mhgraph's Chunk,
Claim, Topic and Target nodes (claim_graph.py), and personalized PageRank over it (pagerank.py)."""

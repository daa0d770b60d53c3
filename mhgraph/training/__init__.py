"""What every model trained here shares: k-fold splits by question (TreeHop and the reranker alike)."""

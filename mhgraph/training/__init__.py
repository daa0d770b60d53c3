"""Models trained here: TreeHop's UpdateGate (treehop.py) and the reranker's cross-encoder (reranker.py),
and what both trainers share: k-fold splits by question (folds.py), the loop that trains one model per
fold plus the final one and what folds.json records of them (kfold.py), and bfloat16 where it is fast
(precision.py). Each model's definition stays with its method (mhgraph/treehop, mhgraph/rerank)."""

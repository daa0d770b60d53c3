"""TreeHop's model: the UpdateGate (model.py) and its checkpoints (checkpoint.py); its k-fold training is
mhgraph/training/treehop.py."""

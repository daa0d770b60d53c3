"""TreeHop's model: the UpdateGate (model.py), its checkpoints (checkpoint.py) and its k-fold training (train.py)."""

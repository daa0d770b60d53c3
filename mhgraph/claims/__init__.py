"""Claim nodes with bridge-topics and bridge-targets (planned)."""

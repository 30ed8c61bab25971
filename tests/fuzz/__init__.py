"""Differential fuzzing of microtorch against torch (the oracle): see docs/testing.md."""

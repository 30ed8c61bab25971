"""Batching rules of ops/complex_parts.py: complex and polar are elementwise in their two parts."""
from ..ops import complex_parts as cp
from ._batching import register
from ._rules import elementwise

register(cp.Complex, cp.Polar)(elementwise)

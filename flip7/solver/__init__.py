"""The exact solo-round solver: models, exact values of policies, advice, odds, cached tables.

Importing this package is cheap; the compiled kernels (numba) load on the first solve.
"""

from flip7.solver.model import MODELS, Model, Space, build_space, get_model
from flip7.solver.solve import Moments, Solution, evaluate, occupancy, reachable, solve

__all__ = [
    "MODELS",
    "Model",
    "Moments",
    "Solution",
    "Space",
    "build_space",
    "evaluate",
    "get_model",
    "occupancy",
    "reachable",
    "solve",
]

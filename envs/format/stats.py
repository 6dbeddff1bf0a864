"""The one Wilson score interval of a success rate, for every layer that reports one (evaluation sweeps, the grasp
scene of the torch-free deploy runtime, comparisons). Pure Python; here, below both, because the deploy layer imports
nothing above it and two copies had drifted apart at n = 0.
"""

from __future__ import annotations

import math


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a binomial rate (95 % for z = 1.96), clipped to [0, 1].

    Unlike the normal approximation it stays inside [0, 1] and is not degenerate at 0/n or n/n. With no trials
    (n = 0) the rate is undefined and so is its interval: ``(nan, nan)``, which strict-JSON writers record as null;
    ``(0, 1)`` would read as a measured result.
    """
    if n == 0:
        return math.nan, math.nan
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)

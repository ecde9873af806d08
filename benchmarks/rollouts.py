"""Monte Carlo throughput, measured in one run.

1. Rollouts per second on the rocking block scenario with a process pool of 1 and of 2
   workers, and their ratio (target >= 1.7x on this 2-core machine).
2. The per-rollout overhead of ``monte_carlo`` (process start, world build, result write)
   against the rollout's own simulation time, for a 2 s quadruped landing (target <= 20%).

    python benchmarks/rollouts.py
"""

from __future__ import annotations

import tempfile
import time

import numpy as np

from bullet_setimpact.rollouts import monte_carlo


def rate(workers: int, rollouts: int) -> float:
    """Rollouts per second of the rocking block (1 s each) on a pool of ``workers``."""
    start = time.perf_counter()
    monte_carlo("rocking_block", rollouts, seed=0, workers=workers, progress=False)
    return rollouts / (time.perf_counter() - start)


def overhead(rollouts: int) -> tuple[float, float]:
    """Median simulation seconds per quadruped rollout and the mean overhead per rollout."""
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        results = monte_carlo("quadruped_landing", rollouts, seed=0, workers=1, out=out, duration=2.0, progress=False)
        wall = time.perf_counter() - start
    simulation = np.array([record.simulation_time for record in results.records])
    return float(np.median(simulation)), (wall - simulation.sum()) / rollouts


def main() -> None:
    one, two = rate(1, 24), rate(2, 48)
    print(f"rocking block rollouts/s: 1 worker {one:.2f}, 2 workers {two:.2f}, ratio {two / one:.2f} (target >= 1.7)")
    simulation, extra = overhead(8)
    print(
        f"quadruped landing, 2 s: simulation {simulation:.3f} s per rollout, overhead {extra:.3f} s "
        f"= {100 * extra / simulation:.1f}% (target <= 20%; pool start, build and writes included)"
    )


if __name__ == "__main__":
    main()

"""Monte Carlo throughput, measured in one run.

A pool's workers start once per run (forked on Linux, see ``bullet_setimpact.montecarlo.pool``) and
then take rollout after rollout, so each figure is measured two ways: end to end, and in
steady state, from the difference between a short and a long run (the one-time start
cancels).

1. Rollouts per second on the rocking block scenario with 1 worker (in-process) and a
   process pool of 2 workers, and their ratio (target >= 1.7x on this 2-core machine).
2. The per-rollout overhead of ``monte_carlo`` (world build, result transfer and write)
   against the rollout's own simulation time, for a 2 s quadruped landing (target <= 20%),
   and the one-time pool start.

    python benchmarks/rollouts.py
"""

from __future__ import annotations

import tempfile
import time

import numpy as np

from bullet_setimpact.montecarlo.rollouts import monte_carlo


def timed_run(scenario: str, rollouts: int, workers: int, duration: float | None = None) -> tuple[float, float]:
    """Wall seconds of a run written to a fresh directory, and its summed stepping wall seconds."""
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        results = monte_carlo(scenario, rollouts, seed=0, workers=workers, out=out, duration=duration, progress=False)
        wall = time.perf_counter() - start
    return wall, float(np.sum([record.stepping_wall_time for record in results.records]))


def rates(workers: int, short: int, long: int) -> tuple[float, float]:
    """Rocking-block rollouts per second: end to end (the long run) and in steady state."""
    wall_short, _ = timed_run("rocking_block", short, workers)
    wall_long, _ = timed_run("rocking_block", long, workers)
    return long / wall_long, (long - short) / (wall_long - wall_short)


def main() -> None:
    one_end, one_steady = rates(1, 12, 36)
    two_end, two_steady = rates(2, 24, 72)
    print("rocking block rollouts/s     1 worker  2 workers  ratio (target >= 1.7)")
    print(f"  end to end (36 / 72)     {one_end:8.2f}  {two_end:9.2f}  {two_end / one_end:5.2f}")
    print(f"  steady state             {one_steady:8.2f}  {two_steady:9.2f}  {two_steady / one_steady:5.2f}")

    short, long = 4, 16
    wall_short, sim_short = timed_run("quadruped_landing", short, 1, duration=2.0)
    wall_long, sim_long = timed_run("quadruped_landing", long, 1, duration=2.0)
    simulation = (sim_long - sim_short) / (long - short)
    per_rollout = ((wall_long - wall_short) - (sim_long - sim_short)) / (long - short)
    start_up = wall_short - sim_short - short * per_rollout
    print(
        f"quadruped landing, 2 s, 1 worker: simulation {simulation:.3f} s per rollout; overhead per rollout "
        f"(build, transfer, write) {per_rollout:.3f} s = {100 * per_rollout / simulation:.1f}% (target <= 20%); "
        f"one-time pool start {start_up:.2f} s ({100 * (wall_long - sim_long) / sim_long:.1f}% of a {long}-rollout run)"
    )


if __name__ == "__main__":
    main()

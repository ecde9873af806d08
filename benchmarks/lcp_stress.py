"""Stress test of the step-LCP solve (issue 10): many LCPs per hard family, a table of outcomes.

For every family of ``tests/hard_lcps.py`` (the slow tier's bulk family, mu to 1e5, mass
ratios to 1e8, near-parallel normals, 1e-9 velocities beside O(1), 16..128 contacts, all
combined) it solves ``--count`` step LCPs (eq. 75) with
:func:`bullet_setimpact.lcp_solve.solve_lcp` as the Routh law does (random covering vectors drawn
from the seed, bounds from :func:`~bullet_setimpact.laws.routh.step_lcp_bounds`) and prints:

- ``fallbacks``: solves where randomized Lemke failed (its raises, caught) and a later stage
  answered, by stage;
- the mean time of a fast-path solve and of a fallback solve;
- the worst residual of any returned solution (recomputed) and the final raises (must be 0).

Usage::

    python benchmarks/lcp_stress.py --count 2000 [--families mu,tiny] [--workers 2]

The generators live with the tests (``tests/hard_lcps.py``, shared with the slow tier so
that both draw the same families); this script puts the repository root on ``sys.path`` to
import them, and otherwise uses only public names of the package.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: tests/hard_lcps.py

from bullet_setimpact.lcp import lcp_residual
from bullet_setimpact.lcp_solve import solve_lcp
from tests.hard_lcps import FAMILIES, step_lcp


def run_chunk(job: tuple[str, int, int]) -> list[tuple[str, float, float]]:
    """``(stage or error, seconds, residual)`` for seeds ``start..stop`` of one family."""
    family, start, stop = job
    runs = []
    for seed in range(start, stop):
        W, w, bounds = step_lcp(family, seed)
        begin = time.perf_counter()
        try:
            solution = solve_lcp(W, w, rng=np.random.default_rng(seed), bounds=bounds)
        except Exception as exc:  # counted as a final raise
            runs.append((f"raised {type(exc).__name__}", time.perf_counter() - begin, np.inf))
            continue
        runs.append((solution.method, time.perf_counter() - begin, lcp_residual(W, w, solution.z)))
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=2000, help="LCPs per family (default 2000)")
    parser.add_argument("--families", default=",".join(FAMILIES), help=f"comma-separated subset of {FAMILIES}")
    parser.add_argument("--many-count", type=int, default=None, help="LCPs for 'many' and 'combined' (default: --count)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    args = parser.parse_args()
    families = args.families.split(",")
    header = f"{'family':<9} {'LCPs':>6} {'fallbacks':>9} {'share':>8} {'by stage':<46} {'fast ms':>8} {'fallback ms':>11}"
    print(f"{header} {'worst res':>9} {'raises':>6}")
    with ProcessPoolExecutor(args.workers) as pool:
        for family in families:
            count = args.many_count if family in ("many", "combined") and args.many_count is not None else args.count
            step = max(1, count // (8 * args.workers))
            jobs = [(family, start, min(start + step, count)) for start in range(0, count, step)]
            runs = [run for chunk in pool.map(run_chunk, jobs) for run in chunk]
            stages = Counter(run[0] for run in runs)
            fast = [run[1] for run in runs if run[0] == "lemke"]
            slow = [run[1] for run in runs if run[0] != "lemke" and not run[0].startswith("raised")]
            raises = sum(value for key, value in stages.items() if key.startswith("raised"))
            fallback_stages = {key: value for key, value in stages.items() if key != "lemke"}
            worst = max((run[2] for run in runs if np.isfinite(run[2])), default=0.0)
            print(
                f"{family:<9} {len(runs):>6} {sum(fallback_stages.values()):>9} {sum(fallback_stages.values()) / len(runs):>8.2%} "
                f"{fallback_stages!s:<46} {1e3 * np.mean(fast) if fast else 0.0:>8.2f} "
                f"{1e3 * np.mean(slow) if slow else 0.0:>11.1f} {worst:>9.1e} {raises:>6}",
                flush=True,
            )


if __name__ == "__main__":
    main()

"""Journal Table 3, measured: outcome-set sampling speed on the five examples.

For each example at its full Tables 4-8 sample count: LCPs per sample, time per sample and
time per LCP of the batched ``RouthImpact.outcome_set`` (wall clock; the last column is this
process's CPU time per sample, steadier on a shared machine), next to the journal's MATLAB/PATH
figures; then a plain per-sample loop (Algorithm 1 calling Lemke once per step, no cache,
no batching) on the same example, and the samples/s ratio measured in the same run.
Finally the median time of one ``RouthImpact.resolve`` on the rocking block.

Each example's outcome set is computed ``--repeats`` times (fewer when one takes over
:data:`REPEAT_SECONDS`), each on a freshly built problem and law, so each repeat pays the
whole computation again (the first-step exploration included).  The table gives the median
repeat; ``first`` is the first repeat's time per sample, which also pays this process's
first use of the arrays' sizes (the rocking block's 16,384 samples take about 20 ms, so
that is a visible share).

    python benchmarks/outcome_sets.py            # full sample counts (about a minute)
    python benchmarks/outcome_sets.py --quick    # 1/64 of the samples (smoke test)

One untimed warm-up call first, so the first example does not pay the process's first-call costs.
Everything runs on one BLAS thread, as the CLI's ``outcome-set`` does (a threaded BLAS runs the
batched products 2-30x slower).
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np

from bullet_setimpact import RouthImpact, SamplesDroppedWarning, planar
from bullet_setimpact._threads import one_blas_thread
from bullet_setimpact.core.branch_sampling import LemkeSolver
from bullet_setimpact.laws.routh import integrate

#: Repeats stop once one repeat takes longer than this [s] (the disk stack runs once).
REPEAT_SECONDS = 1.0

#: Journal Table 3 (MATLAB + PATH, 2.4 GHz laptop): LCPs/sample, s/sample, s/LCP.
PAPER = {
    "rocking_block": (2.67, 2.1e-3, 8.0e-4),
    "compass_gait": (2.27, 1.9e-3, 8.5e-4),
    "box_wall": (1.97, 1.6e-3, 8.1e-4),
    "ramone": (3.20, 2.2e-3, 7.0e-4),
    "disk_stack": (9.04, 1.1e-2, 1.3e-3),
}


def plain_loop_rate(example: planar.Example, samples: int, seed: int) -> tuple[float, float]:
    """Samples/s and LCPs/sample of Algorithm 1 run one sample at a time with plain Lemke."""
    problem = example.problem
    rng = np.random.default_rng(seed)
    solver = LemkeSolver(problem.step_matrix, problem.step_rhs_map)
    caps = example.step * rng.random((samples, example.max_steps, problem.contacts))
    lcps = 0
    start = time.perf_counter()
    for i in range(samples):
        lcps += int(integrate(problem, solver, example.v_minus[None, :], caps[i : i + 1], rng).steps[0])
    return samples / (time.perf_counter() - start), lcps / samples


def resolve_median_ms(example: planar.Example, calls: int) -> float:
    law = RouthImpact(example.step, example.max_steps)
    times = []
    for seed in range(calls):
        start = time.perf_counter()
        law.resolve(example.problem, example.v_minus, rng=seed)
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="use 1/64 of the journal's sample counts")
    parser.add_argument("--repeats", type=int, default=5, help="outcome sets per example, median reported (default 5)")
    parser.add_argument("--plain-samples", type=int, default=2000, help="samples for the plain per-sample loop")
    args = parser.parse_args()
    divisor = 64 if args.quick else 1
    plain_samples = max(50, args.plain_samples // divisor)

    header = (
        f"{'example':<14}{'samples':>9}{'kept':>9}{'LCP/smp':>9}{'paper':>7}{'us/smp':>9}{'first':>7}{'paper':>8}"
        f"{'us/LCP':>8}{'paper':>7}{'total s':>9}{'plain smp/s':>13}{'batched smp/s':>15}{'ratio':>8}{'cpu us/smp':>12}"
    )
    print(header)
    print("-" * len(header))
    total = total_cpu = 0.0
    warm_up = planar.rocking_block()
    RouthImpact(warm_up.step, warm_up.max_steps).outcome_set(warm_up.problem, warm_up.v_minus, 64, rng=1)
    for name, build in planar.EXAMPLES.items():
        runs = []
        while len(runs) < args.repeats and (not runs or runs[0][0].seconds <= REPEAT_SECONDS):
            example = build()
            samples = max(1024, example.samples // divisor)
            law = RouthImpact(example.step, example.max_steps)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SamplesDroppedWarning)
                cpu = time.process_time()
                result = law.outcome_set(example.problem, example.v_minus, samples, rng=0, full_output=True)
                runs.append((result, time.process_time() - cpu))
        first = runs[0][0].seconds / samples
        result, cpu = sorted(runs, key=lambda run: run[0].seconds)[(len(runs) - 1) // 2]  # the median (lower) repeat
        total += result.seconds
        total_cpu += cpu
        per_sample = result.seconds / samples
        plain_rate, _ = plain_loop_rate(example, plain_samples, seed=1)
        paper_lcps, paper_sample, paper_lcp = PAPER[name]
        print(
            f"{name:<14}{samples:>9}{result.terminated:>9}{result.lcps_per_sample:>9.2f}{paper_lcps:>7.2f}"
            f"{1e6 * per_sample:>9.2f}{1e6 * first:>7.2f}{1e6 * paper_sample:>8.0f}{1e6 * result.seconds / result.lcp_solves:>8.2f}"
            f"{1e6 * paper_lcp:>7.0f}{result.seconds:>9.2f}{plain_rate:>13.0f}{1 / per_sample:>15.0f}"
            f"{plain_rate and (1 / per_sample) / plain_rate:>8.1f}{1e6 * cpu / samples:>12.2f}"
        )
    print("-" * len(header))
    print(f"all five examples (median repeats): {total:.1f} s wall, {total_cpu:.1f} s CPU", end=" ")
    print("(targets: <= 1 us/sample, disk stack <= 15; <= 15 s in all)")
    rocking = planar.rocking_block()
    print(f"RouthImpact.resolve on the rocking block: median {resolve_median_ms(rocking, 2000):.3f} ms over 2000 calls (target <= 1 ms)")


if __name__ == "__main__":
    with one_blas_thread():
        main()

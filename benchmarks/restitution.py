"""Outcome-set cost per sample with Stronge-type restitution vs the inelastic law.

For each journal example: ``RouthImpact.outcome_set`` at ``e = 0`` (the inelastic Algorithm
1-2) and at ``e = 0.3, 0.7`` on every contact, same law settings and sample count; prints
LCPs per sample, microseconds per sample (wall clock, and CPU time of this process, steadier
on a shared machine; with ``OPENBLAS_NUM_THREADS=1`` it is the compute time), terminated fraction
and the cost ratios to ``e = 0`` (target <= 2).

    python benchmarks/restitution.py                  # 4096 samples per case
    python benchmarks/restitution.py --quick          # 512 samples
    python benchmarks/restitution.py --samples 65536  # Lemke's cold start amortized over more samples

One untimed warm-up call first, so no case pays the process's first-call costs.
"""

from __future__ import annotations

import argparse
import time
import warnings

from bullet_setimpact import ImpactProblem, RouthImpact, SamplesDroppedWarning, planar

EXAMPLES = ("rocking_block", "compass_gait", "box_wall", "disk_stack")
COEFFICIENTS = (0.0, 0.3, 0.7)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="512 samples per case instead of 4096")
    parser.add_argument("--samples", type=int, default=4096, help="samples per case (default 4096)")
    args = parser.parse_args()
    samples = 512 if args.quick else args.samples
    law = RouthImpact("auto", 200)
    warm_up = planar.example(EXAMPLES[0])
    law.outcome_set(warm_up.problem, warm_up.v_minus, 64, rng=1)
    print(f"{'example':<15}{'e':>5}{'LCPs/sample':>13}{'us/sample':>11}{'kept':>8}{'ratio':>8}{'cpu us/smp':>12}{'cpu ratio':>11}")
    for name in EXAMPLES:
        example = planar.example(name)
        p = example.problem
        base = cpu_base = None
        for e in COEFFICIENTS:
            problem = ImpactProblem(p.M, p.Jn, p.Jt, p.mu, restitution=e)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SamplesDroppedWarning)
                cpu = time.process_time()
                result = law.outcome_set(problem, example.v_minus, samples, rng=0, full_output=True)
                cpu = 1e6 * (time.process_time() - cpu) / samples
            per_sample = 1e6 * result.seconds / samples
            base = per_sample if base is None else base
            cpu_base = cpu if cpu_base is None else cpu_base
            kept = result.terminated / samples
            print(
                f"{name:<15}{e:>5.1f}{result.lcps_per_sample:>13.2f}{per_sample:>11.1f}{kept:>8.3f}{per_sample / base:>8.2f}"
                f"{cpu:>12.1f}{cpu / cpu_base:>11.2f}"
            )


if __name__ == "__main__":
    main()

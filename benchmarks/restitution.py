"""Outcome-set cost per sample with Stronge-type restitution vs the inelastic law.

For each journal example: ``RouthImpact.outcome_set`` at ``e = 0`` (the inelastic Algorithm
1-2) and at ``e = 0.3, 0.7`` on every contact, same law settings and sample count; prints
LCPs per sample, microseconds per sample, terminated fraction and the cost ratio to ``e = 0``
(target <= 2).

    python benchmarks/restitution.py            # 4096 samples per case
    python benchmarks/restitution.py --quick    # 512 samples
"""

from __future__ import annotations

import argparse
import warnings

from bullet_setimpact import ImpactProblem, RouthImpact, SamplesDroppedWarning, planar

EXAMPLES = ("rocking_block", "compass_gait", "box_wall", "disk_stack")
COEFFICIENTS = (0.0, 0.3, 0.7)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="512 samples per case instead of 4096")
    samples = 512 if parser.parse_args().quick else 4096
    law = RouthImpact("auto", 200)
    print(f"{'example':<15}{'e':>5}{'LCPs/sample':>13}{'us/sample':>11}{'kept':>8}{'ratio':>8}")
    for name in EXAMPLES:
        example = planar.example(name)
        p = example.problem
        base = None
        for e in COEFFICIENTS:
            problem = ImpactProblem(p.M, p.Jn, p.Jt, p.mu, restitution=e)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SamplesDroppedWarning)
                result = law.outcome_set(problem, example.v_minus, samples, rng=0, full_output=True)
            per_sample = 1e6 * result.seconds / samples
            base = per_sample if base is None else base
            kept = result.terminated / samples
            print(f"{name:<15}{e:>5.1f}{result.lcps_per_sample:>13.2f}{per_sample:>11.1f}{kept:>8.3f}{per_sample / base:>8.2f}")


if __name__ == "__main__":
    main()

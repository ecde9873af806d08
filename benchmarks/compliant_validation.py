"""Compliant validation of Stronge-type restitution (the journal's Fig. 12 method, extended).

For the rocking block and the box against the wall, with every contact's ``e`` in {0.3, 0.7}:
bilinear-spring compliant impacts (:mod:`bullet_setimpact.analysis.compliant`) for ``k_A / k_B``
log-spaced over 1e-5 ... 1e5, and their distance to the restitution outcome set
(:mod:`bullet_setimpact.analysis.set_distance`): the nearest of ``outcome_set``'s uniform samples and
of rate-sampled trajectories, and, where that exceeds half the 0.5 % target, the witness
trajectory that follows the compliant rates.  Prints one row per stiffness ratio and the
largest distance per example and ``e`` (relative to ``|v-|``); with ``--figure PATH`` draws
the sets and the compliant outcomes projected on the contact normals (journal Fig. 12 top).

    python benchmarks/compliant_validation.py              # 21 ratios, 2**14 + 2**14 samples
    python benchmarks/compliant_validation.py --quick      # 5 ratios, 2**12 + 2**12 samples
    python benchmarks/compliant_validation.py --witness-all  # the witness's distance at every ratio
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from bullet_setimpact import RouthImpact, planar
from bullet_setimpact.analysis.compliant import compliant_impact
from bullet_setimpact.analysis.set_distance import distance_to_samples, distance_to_set, set_members

EXAMPLES = ("rocking_block", "box_wall")
COEFFICIENTS = (0.3, 0.7)
#: The target: every compliant outcome within this fraction of ``|v-|`` of the set.
TOLERANCE = 0.005
#: Nearest-member distances above this (relative to ``|v-|``) are checked with the witness.
WITNESS_ABOVE = TOLERANCE / 2.0
LAW = RouthImpact("auto", 200)


def validate(
    name: str, e: float, ratios: np.ndarray, samples: int, witness_above: float = WITNESS_ABOVE
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The set's samples, the compliant outcomes, their distances to the set (relative to ``|v-|``)
    and whether each needed the witness."""
    example = planar.example(name)
    problem = example.problem.with_restitution(e)
    members = set_members(LAW, problem, example.v_minus, samples)
    speed = float(np.linalg.norm(example.v_minus))
    outcomes, distances, witnessed = [], [], []
    for ratio in ratios:
        compliant = compliant_impact(problem, example.v_minus, np.array([ratio, 1.0]))
        nearest = float(distance_to_samples(compliant.velocity, members)[0])
        bound = distance_to_set(
            LAW, problem, example.v_minus, compliant.velocity, compliant.impulse_history, members, witness_above * speed
        )
        outcomes.append(compliant.velocity)
        distances.append(bound / speed)
        witnessed.append(nearest > witness_above * speed)
    return members, np.array(outcomes), np.array(distances), np.array(witnessed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 ratios and 2**12 samples per sampler")
    parser.add_argument("--figure", help="save the projected sets and compliant outcomes here")
    parser.add_argument("--witness-all", action="store_true", help="run the witness for every ratio (slower, tighter bounds)")
    args = parser.parse_args()
    ratios = np.logspace(-5, 5, 5 if args.quick else 21)
    samples = 2**12 if args.quick else 2**14
    figure = []
    summary = []
    for name in EXAMPLES:
        for e in COEFFICIENTS:
            start = time.perf_counter()
            members, outcomes, distances, witnessed = validate(name, e, ratios, samples, 0.0 if args.witness_all else WITNESS_ABOVE)
            print(f"{name} e={e}: {len(members)} set samples, {time.perf_counter() - start:.1f} s")
            print(f"  {'kA/kB':>9}{'distance/|v-|':>15}  witness (yes: bounded by Algorithm 1 run on the compliant impulse increments)")
            for ratio, distance, used in zip(ratios, distances, witnessed, strict=True):
                print(f"  {ratio:>9.1e}{distance:>15.2e}  {'yes' if used else ''}")
            summary.append((name, e, float(distances.max()), float(ratios[distances.argmax()])))
            figure.append((name, e, members, outcomes))
    print(f"\nlargest distance to the set / |v-| per example and e (target {TOLERANCE:.0e} = {TOLERANCE:.1%}):")
    for name, e, worst, ratio in summary:
        print(f"  {name:<15} e={e}: {worst:.2e} (kA/kB = {ratio:.1e})")
    if args.figure:
        draw(figure, args.figure)


def draw(panels: list[tuple[str, float, np.ndarray, np.ndarray]], path: str) -> None:
    """Sets (dots) and compliant outcomes (red) projected on the contact normals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 4))
    for ax, (name, e, members, outcomes) in zip(axes, panels, strict=True):
        problem = planar.example(name).problem
        ax.scatter(*problem.normal_velocities(members).T, s=0.2, color="tab:blue", label="restitution set")
        ax.plot(*problem.normal_velocities(outcomes).T, "r.", label="compliant, kA/kB 1e-5..1e5")
        ax.set(title=f"{name}, e = {e}", xlabel="Jn_A v+", ylabel="Jn_B v+")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()

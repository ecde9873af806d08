"""Compliant validation of the outcome sets (the journal's Fig. 12 method, extended).

For the three two-contact examples (rocking block, compass gait, box against the wall) and
every contact's ``e`` in {0, 0.3, 0.5, 0.7}: bilinear-spring compliant impacts
(:mod:`bullet_setimpact.analysis.compliant`, integrated by ``solve_ivp``, independent of the
law) for ``k_A / k_B`` log-spaced over 1e-5 ... 1e5, and their distance to the outcome set of
the example's own law (its h and N): the nearest of 2**14 default ``outcome_set`` samples
(:mod:`bullet_setimpact.analysis.set_distance`; an upper bound on the distance to the set),
and, where that exceeds half the 0.5 % target, also the witness trajectory that follows the
compliant rates.  Prints one row per stiffness ratio, then the largest distance per example
and ``e`` (relative to ``|v-|``) and the outcome set's coverage estimate
(:meth:`~bullet_setimpact.laws.routh.OutcomeSet.coverage`); with ``--figure PATH`` draws the
sets and the compliant outcomes projected on the contact normals (journal Fig. 12 top).

    python benchmarks/compliant_validation.py              # 21 ratios, 2**14 samples
    python benchmarks/compliant_validation.py --quick      # 5 ratios, 2**12 samples
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from bullet_setimpact import RouthImpact, SamplesDroppedWarning, planar
from bullet_setimpact.analysis.compliant import compliant_impact
from bullet_setimpact.analysis.set_distance import distance_to_samples, distance_to_set

EXAMPLES = ("rocking_block", "compass_gait", "box_wall")
COEFFICIENTS = (0.0, 0.3, 0.5, 0.7)
#: The target: every compliant outcome within this fraction of ``|v-|`` of the set.
TOLERANCE = 0.005
#: Nearest-sample distances above this (relative to ``|v-|``) are checked with the witness.
WITNESS_ABOVE = TOLERANCE / 2.0


def validate(name: str, e: float, ratios: np.ndarray, samples: int) -> dict[str, object]:
    """The set's samples and coverage, the compliant outcomes, their nearest-sample distances and
    the witness-tightened bounds (relative to ``|v-|``)."""
    example = planar.example(name)
    problem = example.problem.with_restitution(e)
    law = RouthImpact(example.step, example.max_steps)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SamplesDroppedWarning)
        result = law.outcome_set(problem, example.v_minus, samples, rng=0, full_output=True)
    speed = float(np.linalg.norm(example.v_minus))
    outcomes, nearest, bounded = [], [], []
    for ratio in ratios:
        compliant = compliant_impact(problem, example.v_minus, np.array([ratio, 1.0]))
        outcomes.append(compliant.velocity)
        nearest.append(float(distance_to_samples(compliant.velocity, result.velocities)[0]) / speed)
        bound = distance_to_set(
            law, problem, example.v_minus, compliant.velocity, compliant.impulse_history, result.velocities, WITNESS_ABOVE * speed
        )
        bounded.append(bound / speed)
    return {
        "members": result.velocities,
        "coverage": result.coverage() / speed,
        "outcomes": np.array(outcomes),
        "nearest": np.array(nearest),
        "bounded": np.array(bounded),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 ratios and 2**12 samples")
    parser.add_argument("--figure", help="save the projected sets and compliant outcomes here")
    args = parser.parse_args()
    ratios = np.logspace(-5, 5, 5 if args.quick else 21)
    samples = 2**12 if args.quick else 2**14
    summary, figure = [], []
    for name in EXAMPLES:
        for e in COEFFICIENTS:
            start = time.perf_counter()
            found = validate(name, e, ratios, samples)
            print(f"{name} e={e}: {len(found['members'])} set samples, {time.perf_counter() - start:.1f} s")
            print(
                f"  {'kA/kB':>9}{'nearest':>10}{'witness':>10}   (distance / |v-|; witness: also Algorithm 1 on the compliant increments)"
            )
            for ratio, nearest, bounded in zip(ratios, found["nearest"], found["bounded"], strict=True):
                print(f"  {ratio:>9.1e}{nearest:>10.2e}{bounded:>10.2e}")
            summary.append((name, e, found))
            figure.append((name, e, found["members"], found["outcomes"]))
    print(f"\nlargest distance / |v-| per example and e ({samples} default samples; target {TOLERANCE:.1%}):")
    print(f"  {'example':<15}{'e':>5}{'nearest':>10}{'at kA/kB':>10}{'witness':>10}{'coverage':>10}")
    for name, e, found in summary:
        nearest = found["nearest"]
        print(
            f"  {name:<15}{e:>5}{nearest.max():>10.2e}{ratios[nearest.argmax()]:>10.1e}"
            f"{found['bounded'].max():>10.2e}{found['coverage']:>10.2e}"
        )
    if args.figure:
        draw(figure, args.figure)


def draw(panels: list[tuple[str, float, np.ndarray, np.ndarray]], path: str) -> None:
    """Sets (dots) and compliant outcomes (red) projected on the contact normals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = len(COEFFICIENTS)
    fig, axes = plt.subplots(len(panels) // columns, columns, figsize=(3.6 * columns, 3.4 * len(panels) // columns), squeeze=False)
    for ax, (name, e, members, outcomes) in zip(axes.ravel(), panels, strict=True):
        problem = planar.example(name).problem
        ax.scatter(*problem.normal_velocities(members).T, s=0.2, color="0.6", label="outcome set")
        ax.plot(*problem.normal_velocities(outcomes).T, "r.", label="compliant, kA/kB 1e-5..1e5")
        ax.set(title=f"{name}, e = {e}", xlabel="Jn_A v+", ylabel="Jn_B v+")
    axes[0, 0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()

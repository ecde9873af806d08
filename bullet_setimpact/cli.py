"""The ``bullet-setimpact`` command line.  Only this module prints; errors exit non-zero
with a one-line message and no traceback."""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from . import planar
from .errors import SamplesDroppedWarning, SetImpactError
from .laws import AnitescuPotraImpact, RouthImpact, SequentialImpact

#: Resolve-paths drawn in light gray on outcome-set figures.
FIGURE_PATHS = 150


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {value}")
    return value


def outcome_set_command(args: argparse.Namespace) -> None:
    """Approximate a journal example's post-impact set (Algorithm 2), print a summary, save/plot it."""
    example = planar.example(args.name)
    law = RouthImpact(example.step, example.max_steps)
    samples = args.samples or example.samples
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SamplesDroppedWarning)
        result = law.outcome_set(example.problem, example.v_minus, samples, rng=args.seed, sampler=args.sampler, full_output=True)
    problem = example.problem
    normal = problem.normal_velocities(result.velocities)
    print(f"{example.name}: {example.description}")
    print(f"  law            RouthImpact(step={example.step}, max_steps={example.max_steps}), sampler={args.sampler}, seed={args.seed}")
    print(f"  samples kept   {result.terminated} of {result.samples} ({result.samples - result.terminated} still colliding, dropped)")
    print(f"  LCPs / sample  {result.lcps_per_sample:.2f}  ({result.lemke_calls} Lemke calls, the rest from the basis cache)")
    print(f"  time / sample  {1e6 * result.seconds / result.samples:.2f} us  ({result.seconds:.2f} s in all)")
    print("  post-impact normal velocity per contact [m/s]:")
    for name, low, high in zip(example.contact_names, normal.min(axis=0), normal.max(axis=0), strict=True):
        print(f"    {name:>3}  min {low:+.4f}  max {high:+.4f}")
    for warning in caught:
        if not issubclass(warning.category, SamplesDroppedWarning):
            warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    if args.out:
        _save_outcome_set(Path(args.out), example, result.velocities, args)
        print(f"  saved          {args.out}")
    if args.plot:
        _plot_outcome_set(Path(args.plot), example, result.velocities, args.seed)
        print(f"  figure         {args.plot}")


def _save_outcome_set(path: Path, example: planar.Example, velocities: np.ndarray, args: argparse.Namespace) -> None:
    problem = example.problem
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".partial.npz")
    np.savez_compressed(
        temporary,
        velocities=velocities,
        normal_velocities=problem.normal_velocities(velocities),
        tangential_velocities=problem.tangential_velocities(velocities),
        v_minus=example.v_minus,
        contact_names=np.array(example.contact_names),
        coordinates=np.array(example.coordinates),
        seed=args.seed,
        samples=args.samples or example.samples,
        sampler=args.sampler,
    )
    temporary.replace(path)


def _plot_outcome_set(path: Path, example: planar.Example, velocities: np.ndarray, seed: int) -> None:
    from .plotting import OutcomeFigureData, outcome_set_figure

    law = RouthImpact(example.step, example.max_steps)
    rng = np.random.default_rng(seed)
    paths = [law.resolve(example.problem, example.v_minus, rng=rng).path for _ in range(FIGURE_PATHS)]
    sequential = {
        "".join(example.contact_names[i] for i in order[:2]) + "...": SequentialImpact(list(order)).resolve(example.problem, example.v_minus).v_plus
        for order in example.sequential_orders
    }
    data = OutcomeFigureData(
        problem=example.problem,
        v_minus=example.v_minus,
        samples=velocities,
        contact_names=example.contact_names,
        anitescu_potra=AnitescuPotraImpact().all_outcomes(example.problem, example.v_minus),
        sequential=sequential,
        paths=paths,
        title=f"{example.name}: post-impact set (Halm & Posa Alg. 2)",
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    outcome_set_figure(data, str(path))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bullet-setimpact",
        description="Set-valued simultaneous frictional impacts (Halm & Posa) for PyBullet.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    outcome = commands.add_parser("outcome-set", help="approximate a journal example's post-impact set (Algorithm 2)")
    outcome.add_argument("name", help=f"example name: {', '.join(planar.EXAMPLES)}")
    outcome.add_argument("--samples", type=_positive_int, default=None, help="samples (default: the journal's Tables 4-8)")
    outcome.add_argument("--seed", type=_non_negative_int, default=0, help="random seed (default 0)")
    outcome.add_argument("--sampler", choices=("random", "sobol"), default="random", help="cap sampler (default random)")
    outcome.add_argument("--out", help="save the outcome set to this .npz file")
    outcome.add_argument("--plot", help="draw the outcome-set figure to this .png file")
    outcome.set_defaults(handler=outcome_set_command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        args.handler(args)
    except (ValueError, SetImpactError, OSError) as exc:
        print(f"bullet-setimpact: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("bullet-setimpact: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())

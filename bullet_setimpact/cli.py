"""The ``bullet-setimpact`` command line.  Only this module prints; errors exit non-zero
with a one-line message and no traceback."""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from . import planar
from .errors import SamplesDroppedWarning, SetImpactError
from .files import atomic_write
from .laws import AnitescuPotraImpact, RouthImpact, SequentialImpact

#: Resolve-paths drawn in light gray on outcome-set figures.
FIGURE_PATHS = 150


def _integer_at_least(minimum: int, what: str) -> Callable[[str], int]:
    """An argparse ``type``: an integer >= ``minimum``, refused naming ``what`` was expected."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected {what}, got {value}")
        return value

    return parse


_positive_int = _integer_at_least(1, "a positive integer")
_non_negative_int = _integer_at_least(0, "a non-negative integer")


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
    arrays = dict(
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
    atomic_write(path, lambda stream: np.savez_compressed(stream, **arrays))


def _plot_outcome_set(path: Path, example: planar.Example, velocities: np.ndarray, seed: int) -> None:
    from .plotting import OutcomeFigureData, outcome_set_figure

    law = RouthImpact(example.step, example.max_steps)
    rng = np.random.default_rng(seed)
    paths = [law.resolve(example.problem, example.v_minus, rng=rng).path for _ in range(FIGURE_PATHS)]
    sequential = {
        "".join(example.contact_names[i] for i in order[:2]) + "...": SequentialImpact(list(order))
        .resolve(example.problem, example.v_minus)
        .v_plus
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


def list_command(args: argparse.Namespace) -> None:
    """Print the scenarios and the journal examples with one-line descriptions."""
    from .scenario import available

    print("scenarios (bullet-setimpact run NAME, render NAME):")
    for name, description in available().items():
        print(f"  {name:<20} {description}")
    print("journal examples (bullet-setimpact outcome-set NAME):")
    for name, build in planar.EXAMPLES.items():
        print(f"  {name:<20} {build().description}")


def _params(pairs: Sequence[str]) -> dict[str, str]:
    result = {}
    for pair in pairs:
        key, separator, value = pair.partition("=")
        if not separator or not key:
            raise ValueError(f"--param expects key=value, got {pair!r}")
        result[key.strip()] = value.strip()
    return result


def _executor(args: argparse.Namespace) -> tuple[object, object]:
    """The executor for ``run`` (and a Dask client to close), from --scheduler / --workers."""
    if args.scheduler:
        try:
            from dask.distributed import Client
        except ImportError:
            raise ValueError("--scheduler needs Dask: pip install 'bullet-setimpact[distributed]'") from None
        try:
            client = Client(args.scheduler, timeout=args.connect_timeout)
        except (OSError, TimeoutError) as exc:
            raise ValueError(f"cannot reach the Dask scheduler at {args.scheduler!r}: {exc}") from None
        return client.get_executor(), client
    return ("serial" if args.workers == 1 else None), None


def run_command(args: argparse.Namespace) -> None:
    """Monte Carlo rollouts of a scenario; print the outcome summary, save and plot it."""
    from .rollouts import monte_carlo

    executor, client = _executor(args)
    try:
        results = monte_carlo(
            args.name,
            args.rollouts,
            seed=args.seed,
            law=args.law,
            executor=executor,  # type: ignore[arg-type]  # an Executor, "serial" or None
            out=args.out,
            duration=args.duration,
            params=_params(args.param),
            workers=args.workers,
        )
    finally:
        if client is not None:
            client.close()  # type: ignore[attr-defined]  # a dask.distributed.Client
    print(results.report())
    if args.out:
        print(f"  rollouts saved in {args.out}/ (rerun the same command to resume)")
    if args.plot:
        from .plotting import rollouts_figure

        Path(args.plot).parent.mkdir(parents=True, exist_ok=True)
        rollouts_figure(results, args.plot)
        print(f"  figure         {args.plot}")


def render_command(args: argparse.Namespace) -> None:
    """Render one rollout of a scenario to a GIF or a PNG strip."""
    from .render import render

    events = render(
        args.name, args.out, seed=args.seed, law=args.law, params=_params(args.param), duration=args.duration, frames=args.frames
    )
    print(f"{args.name}: rollout with seed {args.seed} rendered to {args.out} ({events} impact events)")


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    from .laws import LAWS

    parser = argparse.ArgumentParser(
        prog="bullet-setimpact",
        description="Set-valued simultaneous frictional impacts (Halm & Posa) for PyBullet.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("list", help="list the scenarios and the journal examples")
    listing.set_defaults(handler=list_command)

    run = commands.add_parser("run", help="Monte Carlo rollouts of a scenario over its outcome set")
    run.add_argument("name", help="scenario name (see 'bullet-setimpact list')")
    run.add_argument("--rollouts", type=_positive_int, default=64, help="number of rollouts (default 64)")
    run.add_argument("--seed", type=_non_negative_int, default=0, help="root seed (default 0)")
    run.add_argument("--workers", type=_positive_int, default=None, help="worker processes (default: all cores; 1 runs in-process)")
    run.add_argument("--scheduler", default=None, help="address of a Dask scheduler, e.g. tcp://host:8786")
    run.add_argument("--connect-timeout", type=_positive_float, default=10.0, help=argparse.SUPPRESS)
    run.add_argument("--law", choices=sorted(LAWS), default=None, help="impact law (default: the scenario's set-valued law)")
    run.add_argument("--duration", type=_positive_float, default=None, help="simulated seconds per rollout (default: the scenario's)")
    run.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="override a scenario parameter (repeatable)")
    run.add_argument("--out", help="results directory, written rollout by rollout (resumable)")
    run.add_argument("--plot", help="draw the Monte Carlo summary figure to this .png file")
    run.set_defaults(handler=run_command)

    outcome = commands.add_parser("outcome-set", help="approximate a journal example's post-impact set (Algorithm 2)")
    outcome.add_argument("name", help=f"example name: {', '.join(planar.EXAMPLES)}")
    outcome.add_argument("--samples", type=_positive_int, default=None, help="samples (default: the journal's Tables 4-8)")
    outcome.add_argument("--seed", type=_non_negative_int, default=0, help="random seed (default 0)")
    outcome.add_argument("--sampler", choices=("random", "sobol"), default="random", help="cap sampler (default random)")
    outcome.add_argument("--out", help="save the outcome set to this .npz file")
    outcome.add_argument("--plot", help="draw the outcome-set figure to this .png file")
    outcome.set_defaults(handler=outcome_set_command)

    show = commands.add_parser("render", help="render one rollout headless (TinyRenderer) to a .gif or .png strip")
    show.add_argument("name", help="scenario name")
    show.add_argument("--seed", type=_non_negative_int, default=0, help="rollout seed (default 0)")
    show.add_argument("--out", required=True, help="output file, .gif or .png")
    show.add_argument("--law", choices=sorted(LAWS), default=None, help="impact law (default: the scenario's)")
    show.add_argument("--duration", type=_positive_float, default=None, help="simulated seconds (default: the scenario's)")
    show.add_argument("--frames", type=_positive_int, default=60, help="frames to render (default 60)")
    show.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="override a scenario parameter (repeatable)")
    show.set_defaults(handler=render_command)
    return parser


def run_script(path: str, argv: Sequence[str] | None = None) -> None:
    """What ``python scenarios/<name>.py [options]`` does: ``bullet-setimpact run <path>
    --rollouts 4 --workers 1 [options]`` (the script's own options win)."""
    options = sys.argv[1:] if argv is None else list(argv)
    raise SystemExit(main(["run", str(path), "--rollouts", "4", "--workers", "1", *options]))


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

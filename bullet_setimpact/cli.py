"""The ``bullet-setimpact`` command line.  Only this module prints; errors exit non-zero
with a one-line message and no traceback."""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np

from ._files import atomic_write
from ._threads import one_blas_thread
from .analysis import planar
from .core.problem import ImpactProblem
from .errors import SamplesDroppedWarning, SetImpactError
from .laws import AnitescuPotraImpact, RouthImpact, SequentialImpact
from .laws.caps import SAMPLERS

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
    _check_outputs(args)
    law = RouthImpact(example.step, example.max_steps)
    samples = args.samples or example.samples
    problem = example.problem.with_restitution(args.restitution) if args.restitution else example.problem
    with warnings.catch_warnings(record=True) as caught, one_blas_thread():  # many small products: see threads.py
        warnings.simplefilter("always", SamplesDroppedWarning)
        result = law.outcome_set(problem, example.v_minus, samples, rng=args.seed, sampler=args.sampler, full_output=True)
    normal = problem.normal_velocities(result.velocities)
    print(f"{example.name}: {example.description}")
    print(
        f"  law            RouthImpact(step={example.step}, max_steps={example.max_steps}), sampler={args.sampler}, seed={args.seed}"
        + (f", restitution e={args.restitution} at every contact" if args.restitution else "")
    )
    print(f"  samples kept   {result.terminated} of {result.samples} ({result.samples - result.terminated} still colliding, dropped)")
    print(f"  LCPs / sample  {result.lcps_per_sample:.2f}  ({result.lemke_calls} Lemke calls, the rest from the basis cache)")
    print(f"  time / sample  {1e6 * result.seconds / result.samples:.2f} us  ({result.seconds:.2f} s in all)")
    start = time.perf_counter()
    coverage = result.coverage()
    speed = float(np.linalg.norm(example.v_minus))
    print(
        f"  coverage       {coverage:.4f} ({coverage / speed:.2%} of |v-|; the distance between two halves of the samples, "
        f"{time.perf_counter() - start:.2f} s)"
    )
    print("  post-impact normal velocity per contact [m/s]:")
    for name, low, high in zip(example.contact_names, normal.min(axis=0), normal.max(axis=0), strict=True):
        print(f"    {name:>3}  min {_rounded(low)}  max {_rounded(high)}")
    for warning in caught:
        if not issubclass(warning.category, SamplesDroppedWarning):
            warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    if args.out:
        _save_outcome_set(Path(args.out), example, problem, result.velocities, args)
        print(f"  saved          {args.out}")
    if args.plot:
        _plot_outcome_set(Path(args.plot), example, problem, result.velocities, args.seed)
        print(f"  figure         {args.plot}")


def _save_outcome_set(
    path: Path, example: planar.Example, problem: ImpactProblem, velocities: np.ndarray, args: argparse.Namespace
) -> None:
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
        restitution=problem.restitution,
    )
    atomic_write(path, lambda stream: np.savez_compressed(stream, **arrays))


def _plot_outcome_set(path: Path, example: planar.Example, problem: ImpactProblem, velocities: np.ndarray, seed: int) -> None:
    from .viz.plotting import OutcomeFigureData, outcome_set_figure

    law = RouthImpact(example.step, example.max_steps)
    rng = np.random.default_rng(seed)
    paths = [law.resolve(problem, example.v_minus, rng=rng).path for _ in range(FIGURE_PATHS)]
    sequential = {
        "-".join(example.contact_names[i] for i in order): SequentialImpact(list(order)).resolve(example.problem, example.v_minus).v_plus
        for order in example.sequential_orders
    }
    described = f"{len(velocities)} outcomes under the set-valued law (h = {law.step} N s, N = {law.max_steps})" + (
        f", restitution e = {problem.restitution.max():g} (the comparisons inelastic)" if problem.elastic else ""
    )
    data = OutcomeFigureData(
        problem=problem,
        v_minus=example.v_minus,
        samples=velocities,
        contact_names=example.contact_names,
        anitescu_potra=AnitescuPotraImpact().all_outcomes(example.problem, example.v_minus),
        sequential=sequential,
        paths=paths,
        title=f"{example.name.replace('_', ' ').capitalize()}: {described}, seed {seed}",
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    outcome_set_figure(data, str(path))


def _rounded(value: float) -> str:
    """``value`` to 4 decimals with its sign, without a ``-0.0000``."""
    text = f"{value:+.4f}"
    return "+0.0000" if text == "-0.0000" else text


def _plain(text: str) -> str:
    """A docstring's text without reStructuredText literal quotes."""
    return text.replace("``", "")


def list_command(args: argparse.Namespace) -> None:
    """Print the scenarios and the journal examples, or one scenario's description and parameters."""
    from .montecarlo.scenario import available

    if args.name:
        print(scenario_help(args.name))
        return
    print("scenarios (bullet-setimpact run NAME, render NAME; list NAME for its parameters):")
    for name, description in available().items():
        print(f"  {name:<20} {_plain(description)}")
    print("journal examples (bullet-setimpact outcome-set NAME):")
    for name, build in planar.EXAMPLES.items():
        print(f"  {name:<20} {build().description}")


def scenario_help(name: str) -> str:
    """A scenario's description, what it measures, and its parameters with defaults and units."""
    from .montecarlo.scenario import describe, docstring, parameter_help, script_path

    text = describe(docstring(script_path(name)))
    lines = [f"{name}: {_plain(text['description'])}", f"  measures: {_plain(text['measures'])}", "  parameters (--param KEY=VALUE):"]
    rows = parameter_help(name)
    width = max([16, *(len(key) for key, _, _ in rows)])
    for key, default, comment in rows:
        shown = f"{default:.6g}" if isinstance(default, float) and len(repr(default)) > 10 else repr(default)
        lines.append(f"    {key:<{width}} {shown:<20} {_plain(comment)}".rstrip())
    return "\n".join(lines)


class _ScenarioHelp(argparse.Action):
    """``-h/--help`` that, after a scenario name, also prints the scenario's parameters."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, help: str | None = None, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object, option: str | None = None) -> None:
        parser.print_help()
        name = getattr(namespace, "name", None)
        if name:
            try:
                print("\n" + scenario_help(name))
            except ValueError as exc:
                print(f"\n{exc}")
        parser.exit()


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


def _check_outputs(args: argparse.Namespace, out_folder: bool = False) -> None:
    """Before any work: refuse a ``--plot`` format matplotlib cannot write, and make sure ``--plot``
    and ``--out`` (a folder with ``out_folder``, else a file) can be written (:func:`_writable`)."""
    if getattr(args, "plot", None):
        from matplotlib.figure import Figure

        formats = Figure().canvas.get_supported_filetypes()
        suffix = Path(args.plot).suffix.lower().lstrip(".")
        if suffix not in formats:
            raise ValueError(f"--plot {args.plot!r}: expected a file ending in one of {', '.join('.' + key for key in sorted(formats))}")
        _writable("--plot", args.plot)
    if args.out:
        _writable("--out", args.out, folder=out_folder)


def _writable(option: str, path: str, folder: bool = False) -> None:
    """Check that ``path`` (a file, or with ``folder`` a folder) can be written, so that a long run
    does not fail only when it saves: its nearest existing folder must take a new file (a nameless
    probe file is opened there) and the missing folders below it, created when the output is
    written, are named on stderr.  ValueError naming ``option``, the path and the reason."""
    target = Path(path)
    directory = target if folder else target.parent
    existing = next(ancestor for ancestor in (directory, *directory.parents) if ancestor.exists())
    if not existing.is_dir():
        raise ValueError(f"{option} {path!r}: {str(existing)!r} is a file, not a folder")
    if not folder and target.is_dir():
        raise ValueError(f"{option} {path!r} is a folder, expected a file name")
    try:
        tempfile.TemporaryFile(dir=existing).close()
    except OSError as exc:
        raise ValueError(f"{option} {path!r}: cannot write in {str(existing)!r} ({exc.strerror or exc})") from None
    if existing != directory:
        print(f"bullet-setimpact: {option} will create the folder {directory}", file=sys.stderr)


def _law(args: argparse.Namespace) -> object:
    """The ``--law`` name, or with ``--step``/``--max-steps`` a ``RouthImpact`` of those
    (default ``"auto"`` and 50 for the one not given)."""
    if args.step is None and args.max_steps is None:
        return args.law
    if args.law not in (None, RouthImpact.name):
        raise ValueError(f"--step and --max-steps set RouthImpact's h and N; they do not apply to --law {args.law}")
    return RouthImpact("auto" if args.step is None else args.step, 50 if args.max_steps is None else args.max_steps)


def run_command(args: argparse.Namespace) -> None:
    """Monte Carlo rollouts of a scenario; print the outcome summary, save and plot it."""
    from .montecarlo.rollouts import monte_carlo

    _check_outputs(args, out_folder=True)
    executor, client = _executor(args)
    try:
        results = monte_carlo(
            args.name,
            args.rollouts,
            seed=args.seed,
            law=_law(args),  # type: ignore[arg-type]  # a law name, a RouthImpact or None
            executor=executor,  # type: ignore[arg-type]  # an Executor, "serial" or None
            out=args.out,
            duration=args.duration,
            params=_params(args.param),
            workers=args.workers,
            on_failure=args.on_failure,
            resume=not args.no_resume,
            retry_failed=args.retry_failed,
        )
    finally:
        if client is not None:
            client.close()  # type: ignore[attr-defined]  # a dask.distributed.Client
    print(results.report())
    if args.out:
        print(f"  rollouts saved in {args.out}/ (rerun the same command to resume)")
    if args.plot:
        from .montecarlo.reference import first_impact
        from .viz.plotting import rollouts_figure

        with warnings.catch_warnings(), one_blas_thread():  # the figure's outcome set: see _threads.py
            warnings.simplefilter("ignore", SamplesDroppedWarning)
            reference = first_impact(args.name, law=_law(args), params=_params(args.param), seed=args.seed, duration=args.duration)  # type: ignore[arg-type]
        Path(args.plot).parent.mkdir(parents=True, exist_ok=True)
        rollouts_figure(results, args.plot, reference=reference)
        print(f"  figure         {args.plot}")


def render_command(args: argparse.Namespace) -> None:
    """Render one rollout of a scenario to a GIF or a PNG strip."""
    from .viz.render import checked_output, render

    checked_output(args.out, "--out")
    _check_outputs(args)
    events = render(
        args.name,
        args.out,
        seed=args.seed,
        law=_law(args),  # type: ignore[arg-type]  # a law name, a RouthImpact or None
        params=_params(args.param),
        duration=args.duration,
        frames=args.frames,
        size=(args.width, args.height),
    )
    print(f"{args.name}: rollout with seed {args.seed} rendered to {args.out} ({events} impact event{'' if events == 1 else 's'})")


def _unit_interval(text: str) -> float:
    """argparse type: a number in [0, 1]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got {text!r}")
    return value


def _step_size(text: str) -> float | str:
    """``--step``: RouthImpact's ``h``, a positive number or ``auto``."""
    return "auto" if text == "auto" else _positive_float(text)


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def _add_law_options(parser: argparse.ArgumentParser, laws: Sequence[str]) -> None:
    parser.add_argument("--law", choices=sorted(laws), default=None, help="impact law (default: the scenario's set-valued law)")
    parser.add_argument("--step", type=_step_size, default=None, help="RouthImpact's step h [N s] or 'auto' (with --law routh or none)")
    parser.add_argument("--max-steps", type=_positive_int, default=None, help="RouthImpact's N, steps before the final one")
    parser.add_argument("--duration", type=_positive_float, default=None, help="simulated seconds per rollout (default: the scenario's)")
    parser.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="override a scenario parameter (repeatable)")


def build_parser(rollouts: int = 64, workers: int | None = None, script: str | None = None) -> argparse.ArgumentParser:
    """The CLI's parser; ``rollouts`` and ``workers`` are ``run``'s defaults (a scenario
    script's own are smaller, :func:`run_script`).  With ``script`` (a scenario script run as
    ``python <script>``) it is ``run``'s parser alone, its usage and errors naming that command
    and not offering the scenario argument the script fills in itself."""
    from . import __version__
    from .laws import LAWS

    parser = argparse.ArgumentParser(
        prog="bullet-setimpact",
        description="Set-valued simultaneous frictional impacts (Halm & Posa) for PyBullet.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("list", help="list the scenarios and the journal examples, or one scenario's parameters")
    listing.add_argument("name", nargs="?", help="a scenario name or .py path: print its description and parameters")
    listing.set_defaults(handler=list_command, parser=listing)

    run = commands.add_parser(
        "run",
        help="Monte Carlo rollouts of a scenario over its outcome set",
        add_help=False,
        prog=None if script is None else f"python {script}",
    )
    help_text = "show this help and the scenario's parameters" if script else "show this help (and the scenario's parameters after NAME)"
    run.add_argument("-h", "--help", action=_ScenarioHelp, help=help_text)
    name_help = "scenario name (see 'bullet-setimpact list') or the path of a .py scenario script"
    run.add_argument("name", help=argparse.SUPPRESS if script is not None else name_help)
    run.add_argument("--rollouts", type=_positive_int, default=rollouts, help=f"number of rollouts (default {rollouts})")
    run.add_argument("--seed", type=_non_negative_int, default=0, help="root seed (default 0)")
    run.add_argument(
        "--workers",
        type=_positive_int,
        default=workers,
        help=f"worker processes (default: {'all cores' if workers is None else workers}; 1 runs in-process)",
    )
    run.add_argument("--scheduler", default=None, help="address of a Dask scheduler, e.g. tcp://host:8786")
    run.add_argument("--connect-timeout", type=_positive_float, default=10.0, help=argparse.SUPPRESS)
    _add_law_options(run, sorted(LAWS))
    run.add_argument(
        "--on-failure",
        choices=("record", "raise", "fallback"),
        default="record",
        help="a failed impact: record the rollout and go on (default), stop the run, or apply the Anitescu-Potra fallback",
    )
    run.add_argument("--out", help="results directory, written rollout by rollout (resumable)")
    run.add_argument("--no-resume", action="store_true", help="start over in --out instead of reusing its rollouts")
    run.add_argument("--retry-failed", action="store_true", help="on resume, run the recorded failed rollouts again")
    run.add_argument("--plot", help="draw the Monte Carlo summary figure to this file (.png, .pdf, .svg, ...)")
    run.set_defaults(handler=run_command, parser=run)

    outcome = commands.add_parser("outcome-set", help="approximate a journal example's post-impact set (Algorithm 2)")
    outcome.add_argument("name", help=f"example name: {', '.join(planar.EXAMPLES)}")
    outcome.add_argument("--samples", type=_positive_int, default=None, help="samples (default: the journal's Tables 4-8)")
    outcome.add_argument("--seed", type=_non_negative_int, default=0, help="random seed (default 0)")
    outcome.add_argument(
        "--sampler",
        choices=SAMPLERS,
        default="mixed",
        help="cap sampler: mixed (default: sequential orderings, log-uniform relative rates and uniform caps, reaching the set's ends), "
        "random or sobol (the journal's uniform caps), rates",
    )
    outcome.add_argument("--out", help="save the outcome set to this .npz file")
    outcome.add_argument("--plot", help="draw the outcome-set figure to this file (.png, .pdf, .svg, ...)")
    outcome.add_argument(
        "--restitution",
        type=_unit_interval,
        default=0.0,
        help="Stronge's energetic coefficient e at every contact, in [0, 1] (default 0: inelastic, the journal's model)",
    )
    outcome.set_defaults(handler=outcome_set_command, parser=outcome)

    show = commands.add_parser("render", help="render one rollout headless (TinyRenderer) to a .gif or .png strip", add_help=False)
    show.add_argument("-h", "--help", action=_ScenarioHelp, help="show this help (and the scenario's parameters after NAME)")
    show.add_argument("name", help="scenario name or .py path")
    show.add_argument("--seed", type=_non_negative_int, default=0, help="rollout seed (default 0)")
    show.add_argument("--out", required=True, help="output file, .gif or .png")
    _add_law_options(show, sorted(LAWS))
    show.add_argument(
        "--frames", type=_positive_int, default=60, help="frames at a fixed time interval (default 60), plus slow motion at impacts"
    )
    show.add_argument("--width", type=_positive_int, default=640, help="image width in pixels (default 640)")
    show.add_argument("--height", type=_positive_int, default=480, help="image height in pixels (default 480)")
    show.set_defaults(handler=render_command, parser=show)
    return parser if script is None else run


#: ``run``'s defaults for ``python scenarios/<name>.py`` (a quick look, in-process).
SCRIPT_ROLLOUTS, SCRIPT_WORKERS = 4, 1


def run_script(path: str, argv: Sequence[str] | None = None) -> None:
    """What ``python scenarios/<name>.py [options]`` does: ``bullet-setimpact run <path>
    [options]``, by default with :data:`SCRIPT_ROLLOUTS` rollouts on :data:`SCRIPT_WORKERS` worker."""
    options = sys.argv[1:] if argv is None else list(argv)
    if {"-h", "--help"} & set(options):
        print(f"python {path} [options] runs: bullet-setimpact run {path} [options], with the defaults below\n")
    raise SystemExit(main([str(path), *options], rollouts=SCRIPT_ROLLOUTS, workers=SCRIPT_WORKERS, script=str(path)))


class Terminated(BaseException):
    """``SIGTERM`` arrived (``kill``, a batch system's time limit): the command stops as on Ctrl-C (like
    ``KeyboardInterrupt``, not an ``Exception``: no ``except Exception`` on the way swallows it)."""


@contextlib.contextmanager
def _terminate_as_exception() -> Iterator[None]:
    """While the block runs, ``SIGTERM`` raises :class:`Terminated` in the main thread instead of
    ending the process at once, so that the same cleanup as Ctrl-C's runs (the rollout pool's
    workers are stopped, finished rollouts are already on disk).  Off the main thread (where
    Python cannot take signals) the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum: int, frame: object) -> None:
        raise Terminated

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: Sequence[str] | None = None, rollouts: int = 64, workers: int | None = None, script: str | None = None) -> int:
    """Entry point; returns the process exit code (``rollouts``, ``workers``, ``script``: see
    :func:`build_parser`; with ``script``, ``argv`` holds ``run``'s arguments alone)."""
    parser = build_parser(rollouts, workers, script)
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # refused by the subcommand's parser, so that its usage is the one shown
        args.parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    try:
        with _terminate_as_exception():
            args.handler(args)
    except (ValueError, SetImpactError, OSError) as exc:
        print(f"bullet-setimpact: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("bullet-setimpact: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("bullet-setimpact: terminated", file=sys.stderr)
        return 128 + signal.SIGTERM
    return 0


if __name__ == "__main__":
    sys.exit(main())

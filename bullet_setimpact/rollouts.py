"""Monte Carlo rollouts over outcome sets, on any ``concurrent.futures.Executor``.

:func:`monte_carlo` runs a scenario ``rollouts`` times, each with its own random stream
from ``numpy.random.SeedSequence(seed).spawn(rollouts)``, so every rollout's result depends
only on its index: results are bit-identical whatever the executor (serial, a process pool,
a Dask cluster through ``Client(...).get_executor()``) and however many workers.

With ``out=DIR`` every finished rollout is written at once, atomically, to
``DIR/rollout_<index>.npz`` beside a ``DIR/run.json`` manifest; starting the same run again
skips the rollouts already on disk (a corrupted file is detected and redone), so a run
killed at any point loses at most the rollouts in flight.  A pool this module owns is
rebuilt when one of its worker processes dies.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import sys
import time
import zipfile
from collections import Counter
from collections.abc import Iterable, Mapping
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pybullet as p

from . import __version__
from .bullet.simulator import ImpactEvent, ImpactSimulator
from .files import atomic_write
from .laws import ImpactLaw
from .scenario import Scenario, build, make_law, parameters
from .validation import positive_int

logger = logging.getLogger("bullet_setimpact")

#: Post-impact normal speed above which a contact "lifts off" [m/s].
LIFT_THRESHOLD = 1e-3
#: Post-impact sliding speed above which a contact "slides" (else it "sticks") [m/s].
SLIDE_THRESHOLD = 1e-3
#: Times a pool owned by :func:`monte_carlo` is rebuilt after a worker died.
MAX_POOL_RESTARTS = 20
#: Kinetic-energy samples kept per rollout (the series is decimated to at most this).
ENERGY_SAMPLES = 500
#: The Bullet time step set before every build (scenarios may change it).
DEFAULT_TIME_STEP = 1.0 / 240.0


# --------------------------------------------------------------------------- records
@dataclass(frozen=True)
class EventRecord:
    """One impact of a rollout, as plain arrays (see :class:`ImpactEvent`).

    ``labels`` name the contacts (the scenario's ``label_contact``), ``normal_before`` /
    ``normal_after`` and ``slip_after`` are each contact's normal velocity before and after
    and sliding speed after [m/s]; ``classes`` are "stick", "slide" or "lift off" per contact
    (thresholds :data:`LIFT_THRESHOLD`, :data:`SLIDE_THRESHOLD`).
    """

    time: float
    labels: tuple[str, ...]
    coordinates: tuple[str, ...]
    v_minus: np.ndarray
    v_plus: np.ndarray
    normal_before: np.ndarray
    normal_after: np.ndarray
    slip_after: np.ndarray
    energy_before: float
    energy_after: float
    steps: int
    law: str

    @property
    def classes(self) -> tuple[str, ...]:
        return tuple(classify(n, s) for n, s in zip(self.normal_after, self.slip_after, strict=True))

    @property
    def outcome(self) -> str:
        """The event's outcome class, e.g. ``"A:lift off B:stick"`` (contacts sorted by label)."""
        return " ".join(f"{label}:{kind}" for label, kind in sorted(zip(self.labels, self.classes, strict=True)))


def classify(normal_velocity: float, slip_speed: float) -> str:
    """A contact's post-impact mode from its normal velocity and sliding speed."""
    if normal_velocity > LIFT_THRESHOLD:
        return "lift off"
    return "slide" if slip_speed > SLIDE_THRESHOLD else "stick"


def event_record(event: ImpactEvent, scenario: Scenario) -> EventRecord:
    """Summarize an :class:`ImpactEvent` with the scenario's contact names."""
    problem = event.problem
    return EventRecord(
        time=event.time,
        labels=tuple(scenario.contact_label(contact) for contact in event.contacts),
        coordinates=event.coordinates,
        v_minus=event.v_minus,
        v_plus=event.v_plus,
        normal_before=problem.normal_velocities(event.v_minus),
        normal_after=problem.normal_velocities(event.v_plus),
        slip_after=np.linalg.norm(problem.tangential_velocities(event.v_plus), axis=-1),
        energy_before=event.energy_before,
        energy_after=event.energy_after,
        steps=event.result.steps,
        law=event.law,
    )


@dataclass(frozen=True)
class RolloutRecord:
    """Everything one rollout produced.

    Attributes
    ----------
    index : int
    events : tuple of EventRecord
    final : dict of str to ndarray
        The scenario's final-state summary (:meth:`Scenario.observe`).
    energy_time, energy : ndarray
        Kinetic energy of the scenario's bodies through the rollout [s, J] (decimated).
    wall_time : float
        Seconds the rollout took, build included.
    simulation_time : float
        Of those, seconds spent stepping the simulation.
    """

    index: int
    events: tuple[EventRecord, ...]
    final: dict[str, np.ndarray]
    energy_time: np.ndarray
    energy: np.ndarray
    wall_time: float
    simulation_time: float

    def to_arrays(self) -> dict[str, np.ndarray]:
        """Flat arrays for ``np.savez`` (scalars and strings in a JSON ``meta`` entry)."""
        arrays: dict[str, np.ndarray] = {"energy_time": self.energy_time, "energy": self.energy}
        meta: dict[str, Any] = {"index": self.index, "wall_time": self.wall_time, "simulation_time": self.simulation_time, "events": []}
        for i, event in enumerate(self.events):
            for key in ("v_minus", "v_plus", "normal_before", "normal_after", "slip_after"):
                arrays[f"event{i}.{key}"] = getattr(event, key)
            meta["events"].append(
                {key: getattr(event, key) for key in ("time", "labels", "coordinates", "energy_before", "energy_after", "steps", "law")}
            )
        for key, value in self.final.items():
            arrays[f"final.{key}"] = value
        arrays["meta"] = np.array(json.dumps(meta))
        return arrays

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray]) -> RolloutRecord:
        meta = json.loads(str(arrays["meta"]))
        events = []
        for i, scalars in enumerate(meta["events"]):
            vectors = {
                key: np.asarray(arrays[f"event{i}.{key}"]) for key in ("v_minus", "v_plus", "normal_before", "normal_after", "slip_after")
            }
            events.append(
                EventRecord(
                    time=float(scalars["time"]),
                    labels=tuple(scalars["labels"]),
                    coordinates=tuple(scalars["coordinates"]),
                    energy_before=float(scalars["energy_before"]),
                    energy_after=float(scalars["energy_after"]),
                    steps=int(scalars["steps"]),
                    law=str(scalars["law"]),
                    **vectors,
                )
            )
        final = {key[len("final.") :]: np.asarray(value) for key, value in arrays.items() if key.startswith("final.")}
        return cls(
            meta["index"],
            tuple(events),
            final,
            np.asarray(arrays["energy_time"]),
            np.asarray(arrays["energy"]),
            meta["wall_time"],
            meta["simulation_time"],
        )


# --------------------------------------------------------------------------- one rollout
@dataclass(frozen=True)
class RolloutTask:
    """What a worker needs to run rollout ``index`` (picklable)."""

    scenario: str
    params: dict[str, Any]
    law: str | ImpactLaw | None
    index: int
    seed: np.random.SeedSequence
    duration: float | None


_WORKER_CLIENT: int | None = None


def _client() -> int:
    """This process's PyBullet client (one ``p.DIRECT`` per worker, reset per rollout)."""
    global _WORKER_CLIENT
    if _WORKER_CLIENT is None or not p.isConnected(physicsClientId=_WORKER_CLIENT):
        _WORKER_CLIENT = p.connect(p.DIRECT)
    return _WORKER_CLIENT


def start_rollout(
    client: int, name: str, params: Mapping[str, Any], law: str | ImpactLaw | None, seed: np.random.SeedSequence, duration: float | None
) -> tuple[Scenario, ImpactSimulator, float, int]:
    """Build scenario ``name`` in ``client`` (an empty world) and its simulator: returns the
    scenario, the simulator, Bullet's time step and the number of steps to run."""
    p.setGravity(0, 0, -9.81, physicsClientId=client)
    p.setPhysicsEngineParameter(fixedTimeStep=DEFAULT_TIME_STEP, numSubSteps=0, physicsClientId=client)
    scenario = build(name, client, params)
    simulator = ImpactSimulator(make_law(law, scenario), client, seed=seed)
    dt = float(p.getPhysicsEngineParameters(physicsClientId=client)["fixedTimeStep"])
    return scenario, simulator, dt, max(1, round((duration if duration is not None else scenario.duration) / dt))


def run_rollout(task: RolloutTask) -> RolloutRecord:
    """Build the scenario in a fresh world and simulate it under the law (worker entry point)."""
    start = time.perf_counter()
    client = _client()
    p.resetSimulation(physicsClientId=client)
    scenario, simulator, _, steps = start_rollout(client, task.scenario, task.params, task.law, task.seed, task.duration)
    every = max(1, steps // ENERGY_SAMPLES)
    model = simulator.world.restrict([body for body in scenario.bodies.values() if body not in simulator.world.static_bodies])
    energy_time, energy, events = [], [], []
    stepping = time.perf_counter()
    for step in range(steps):
        for event in simulator.step():
            events.append(event_record(event, scenario))
        if step % every == 0 or step == steps - 1:
            energy_time.append(simulator.time)
            velocity = model.velocity()
            energy.append(0.5 * velocity @ model.configuration().mass_matrix() @ velocity)
    simulation_time = time.perf_counter() - stepping
    return RolloutRecord(
        index=task.index,
        events=tuple(events),
        final=scenario.observe(),
        energy_time=np.array(energy_time),
        energy=np.array(energy),
        wall_time=time.perf_counter() - start,
        simulation_time=simulation_time,
    )


# --------------------------------------------------------------------------- results
@dataclass
class RolloutResults:
    """The records of a Monte Carlo run, in rollout order, and how it was made.

    Attributes
    ----------
    records : list of RolloutRecord
    config : dict
        Scenario, parameters, law, seed, rollouts, duration and versions.
    """

    records: list[RolloutRecord]
    config: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.records)

    @property
    def events(self) -> list[tuple[int, EventRecord]]:
        """Every event as ``(rollout index, EventRecord)``."""
        return [(record.index, event) for record in self.records for event in record.events]

    def outcome_counts(self, first_only: bool = True) -> Counter[str]:
        """How often each outcome class occurred: of each rollout's first impact, or of all impacts."""
        counts: Counter[str] = Counter()
        for record in self.records:
            for event in record.events[:1] if first_only else record.events:
                counts[event.outcome] += 1
        return counts

    def contact_modes(self) -> dict[str, Counter[str]]:
        """Per contact label, how often it ended each impact sticking, sliding or lifting off."""
        modes: dict[str, Counter[str]] = {}
        for _, event in self.events:
            for label, kind in zip(event.labels, event.classes, strict=True):
                modes.setdefault(label, Counter())[kind] += 1
        return modes

    def report(self) -> str:
        """A short text summary (the CLI prints it)."""
        counts = [len(record.events) for record in self.records]
        law = self.config.get("law") or "scenario default"
        lines = [
            f"{self.config.get('scenario', '?')}: {len(self.records)} rollouts, law {law}, seed {self.config.get('seed', '?')}",
            f"  impacts: {sum(counts)} in all, {np.mean(counts):.1f} per rollout",
            f"  outcome classes of the first impact (lift off: vn > {LIFT_THRESHOLD} m/s; slide: |vt| > {SLIDE_THRESHOLD} m/s):",
        ]
        for outcome, count in self.outcome_counts().most_common():
            lines.append(f"    {count:6d}  {outcome}")
        lines.append(f"  wall time per rollout: median {np.median([r.wall_time for r in self.records]):.3f} s")
        return "\n".join(lines)

    def save(self, path: str | Path) -> None:
        """Write ``path`` (.npz, every record) and ``path`` with suffix .json (the config)."""
        path = Path(path)
        arrays: dict[str, np.ndarray] = {}
        for record in self.records:
            arrays.update({f"r{record.index}/{key}": value for key, value in record.to_arrays().items()})
        _atomic_savez(path, arrays)
        _atomic_write_text(path.with_suffix(".json"), json.dumps(self.config, indent=2, default=str))

    @classmethod
    def load(cls, path: str | Path) -> RolloutResults:
        """Read results written by :meth:`save`.

        Raises
        ------
        FileNotFoundError
            If ``path`` does not exist.
        ValueError
            Naming ``path`` if it (or its ``.json`` sidecar) is not a results file.
        """
        path = Path(path)
        grouped: dict[int, dict[str, np.ndarray]] = {}
        try:
            with np.load(path, allow_pickle=False) as data:
                for key in data.files:
                    prefix, name = key.split("/", 1)
                    grouped.setdefault(int(prefix[1:]), {})[name] = data[key]
            config = json.loads(path.with_suffix(".json").read_text()) if path.with_suffix(".json").exists() else {}
            return cls([RolloutRecord.from_arrays(grouped[index]) for index in sorted(grouped)], config)
        except FileNotFoundError:
            raise
        except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError) as exc:
            raise ValueError(f"{path} is not a RolloutResults file written by save() ({type(exc).__name__}: {exc})") from None

    def to_dataframe(self) -> Any:
        """One row per (rollout, impact, contact), as a pandas DataFrame (pandas must be installed)."""
        try:
            import pandas as pd
        except ImportError as exc:
            raise ImportError("RolloutResults.to_dataframe needs pandas: pip install pandas") from exc
        rows = []
        for index, event in self.events:
            for label, vn0, vn1, slip, kind in zip(
                event.labels, event.normal_before, event.normal_after, event.slip_after, event.classes, strict=True
            ):
                rows.append(
                    {
                        "rollout": index,
                        "time": event.time,
                        "contact": label,
                        "normal_before": vn0,
                        "normal_after": vn1,
                        "slip_after": slip,
                        "mode": kind,
                        "energy_before": event.energy_before,
                        "energy_after": event.energy_after,
                        "law": event.law,
                    }
                )
        return pd.DataFrame(rows)


# --------------------------------------------------------------------------- storage
def _atomic_savez(path: Path, arrays: Mapping[str, np.ndarray]) -> None:
    atomic_write(path, lambda stream: np.savez(stream, **arrays))  # type: ignore[arg-type]  # keys are array names


def _atomic_write_text(path: Path, text: str) -> None:
    atomic_write(path, lambda stream: stream.write(text.encode()))


class RolloutStore:
    """A results directory: ``run.json`` plus one ``rollout_<index>.npz`` per finished rollout."""

    def __init__(self, directory: str | Path, config: dict[str, Any], resume: bool) -> None:
        self.directory = Path(directory)
        if self.directory.exists() and not self.directory.is_dir():
            raise ValueError(f"out={str(directory)!r} exists and is not a directory")
        manifest = self.directory / "run.json"
        if manifest.exists():
            try:
                stored = json.loads(manifest.read_text())
            except (OSError, json.JSONDecodeError) as exc:
                raise ValueError(
                    f"results directory {str(directory)!r} has an unreadable run.json ({exc}); move it away or pick another out"
                ) from None
            if resume:
                for key in ("scenario", "params", "law", "seed", "duration", "version"):
                    if stored.get(key) != config.get(key):
                        raise ValueError(
                            f"results directory {str(directory)!r} holds a different run ({key}: {stored.get(key)!r} there, "
                            f"{config.get(key)!r} now); use another out, or resume=False to start over"
                        )
            else:
                for stale in self.directory.glob("rollout_*.npz"):
                    stale.unlink()
        for partial in self.directory.glob(".*.partial"):
            partial.unlink()
        _atomic_write_text(manifest, json.dumps(config, indent=2, default=str))

    def path(self, index: int) -> Path:
        return self.directory / f"rollout_{index:06d}.npz"

    def load(self, index: int) -> RolloutRecord | None:
        """The stored record of rollout ``index``, or None if absent or corrupted (then it is deleted)."""
        path = self.path(index)
        if not path.exists():
            return None
        try:
            with np.load(path, allow_pickle=False) as data:
                record = RolloutRecord.from_arrays({key: data[key] for key in data.files})
            if record.index != index:
                raise ValueError(f"holds rollout {record.index}")
            return record
        except (OSError, ValueError, KeyError, zipfile.BadZipFile, json.JSONDecodeError, EOFError) as exc:
            logger.warning("rollout file %s is corrupted (%s); it will be run again", path, exc)
            path.unlink(missing_ok=True)
            return None

    def save(self, record: RolloutRecord) -> None:
        _atomic_savez(self.path(record.index), record.to_arrays())


# --------------------------------------------------------------------------- driver
def monte_carlo(
    scenario: str,
    rollouts: int,
    seed: int = 0,
    law: str | ImpactLaw | None = None,
    executor: Executor | str | None = None,
    out: str | Path | None = None,
    duration: float | None = None,
    resume: bool = True,
    params: Mapping[str, Any] | None = None,
    workers: int | None = None,
    progress: bool | None = None,
) -> RolloutResults:
    """Run ``rollouts`` rollouts of ``scenario`` and collect their impacts and final states.

    Parameters
    ----------
    scenario : str
        A scenario name (:func:`bullet_setimpact.scenario.available`).
    rollouts : int
    seed : int
        Root seed; rollout ``i`` uses ``SeedSequence(seed).spawn(rollouts)[i]``.
    law : str, ImpactLaw or None
        A law name (``LAWS``), a law instance, or None for the scenario's own.
    executor : Executor, "serial" or None
        Any ``concurrent.futures.Executor`` (e.g. ``dask.distributed.Client(...).get_executor()``);
        "serial" runs in this process; None makes a process pool of ``workers`` (default: the
        machine's cores), rebuilt if a worker dies.
    out : path, optional
        Results directory, written rollout by rollout (see module docstring).
    duration : float, optional
        Simulated time per rollout [s] (default: the scenario's).
    resume : bool
        Reuse the rollouts already in ``out`` (the run's parameters must match).
    params : mapping, optional
        Scenario parameter overrides.
    workers : int, optional
        Size of the default process pool.
    progress : bool, optional
        Show a tqdm progress bar (default: when stderr is a terminal).

    Returns
    -------
    RolloutResults
    """
    rollouts = positive_int("rollouts", rollouts)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    workers = None if workers is None else positive_int("workers", workers)
    if duration is not None and (not isinstance(duration, (int, float)) or not np.isfinite(duration) or duration <= 0):
        raise ValueError(f"duration must be a positive number of seconds, got {duration!r}")
    resolved = parameters(scenario, params)
    config = {
        "scenario": scenario,
        "params": resolved,
        "law": law if law is None or isinstance(law, str) else repr(law),
        "seed": seed,
        "rollouts": rollouts,
        "duration": duration,
        "version": __version__,
        "numpy": np.__version__,
        "pybullet": p.getAPIVersion(),
    }
    store = RolloutStore(out, config, resume) if out is not None else None
    children = np.random.SeedSequence(seed).spawn(rollouts)
    records: dict[int, RolloutRecord] = {}
    if store is not None and resume:
        for index in range(rollouts):
            record = store.load(index)
            if record is not None:
                records[index] = record
    pending = [RolloutTask(scenario, resolved, law, index, children[index], duration) for index in range(rollouts) if index not in records]
    bar = _progress_bar(rollouts, len(records), progress)
    try:
        for record in _execute(pending, executor, workers):
            records[record.index] = record
            if store is not None:
                store.save(record)
            bar.update(1)
    finally:
        bar.close()
    return RolloutResults([records[index] for index in range(rollouts)], config)


def _progress_bar(total: int, done: int, enabled: bool | None) -> Any:
    from tqdm import tqdm

    disable = not sys.stderr.isatty() if enabled is None else not enabled
    return tqdm(total=total, initial=done, desc="rollouts", unit="rollout", disable=disable)


def _execute(tasks: list[RolloutTask], executor: Executor | str | None, workers: int | None) -> Iterable[RolloutRecord]:
    """Yield each task's record as it completes."""
    if not tasks:
        return
    if executor == "serial":
        for task in tasks:
            yield run_rollout(task)
        return
    if isinstance(executor, Executor):
        submitted = [executor.submit(run_rollout, task) for task in tasks]
        for done in as_completed(submitted):
            yield done.result()
        return
    if executor is not None:
        raise ValueError(f"executor must be a concurrent.futures.Executor, 'serial' or None, got {executor!r}")
    remaining = {task.index: task for task in tasks}
    for _ in range(MAX_POOL_RESTARTS + 1):
        pool = ProcessPoolExecutor(max_workers=workers or os.cpu_count() or 1, mp_context=multiprocessing.get_context("spawn"))
        try:
            futures: dict[Future, int] = {pool.submit(run_rollout, task): index for index, task in remaining.items()}
            for future in as_completed(futures):
                record = future.result()
                del remaining[record.index]
                yield record
            return
        except BrokenProcessPool:
            logger.warning("a rollout worker died; restarting the pool for the %d unfinished rollouts", len(remaining))
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
    raise RuntimeError(f"the rollout pool broke more than {MAX_POOL_RESTARTS} times; {len(remaining)} rollouts unfinished")

"""Monte Carlo rollouts over outcome sets, on any ``concurrent.futures.Executor``.

:func:`monte_carlo` runs a scenario ``rollouts`` times, each with its own random stream
from ``numpy.random.SeedSequence(seed).spawn(rollouts)``, so every rollout's result depends
only on its index: results are bit-identical whatever the executor (serial, a process pool,
a Dask cluster through ``Client(...).get_executor()``) and however many workers.

A rollout whose impact fails is recorded (index, seed, reason, events before) and the run
goes on, unless asked otherwise (``on_failure``).  With ``out=DIR`` every rollout is written
at once to a resumable results directory (:mod:`bullet_setimpact.montecarlo.storage`).  The executors
and the process pool are in :mod:`bullet_setimpact.montecarlo.pool`, the records in
:mod:`bullet_setimpact.montecarlo.records` and their analysis in :mod:`bullet_setimpact.montecarlo.results`.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Mapping
from concurrent.futures import Executor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pybullet as p

from .. import __version__
from ..errors import ImpactFailure, SetImpactError
from ..laws import ImpactLaw, get_law
from ..validation import positive_int
from .pool import execute
from .records import EventRecord, RolloutRecord, event_record
from .results import RolloutFailure, RolloutResults
from .scenario import build, make, parameters
from .storage import RolloutStore

__all__ = ["EventRecord", "RolloutFailure", "RolloutRecord", "RolloutResults", "RolloutStore", "RolloutTask", "monte_carlo", "run_rollout"]

#: What a failed impact does in :func:`monte_carlo`.
ON_FAILURE = ("record", "raise", "fallback")
#: Kinetic-energy samples kept per rollout (the series is decimated to at most this).
ENERGY_SAMPLES = 500


# --------------------------------------------------------------------------- one rollout
@dataclass(frozen=True)
class RolloutTask:
    """What a worker needs to run rollout ``index`` (picklable): ``seed`` is the run's root
    seed and ``stream`` the rollout's ``SeedSequence(seed).spawn(n)[index]``."""

    scenario: str | Path
    params: dict[str, Any]
    law: str | ImpactLaw | None
    index: int
    seed: int
    stream: np.random.SeedSequence
    duration: float | None
    on_failure: str = "record"


_WORKER_CLIENT: int | None = None


def _client() -> int:
    """This process's PyBullet client (one ``p.DIRECT`` per worker, reset per rollout)."""
    global _WORKER_CLIENT
    if _WORKER_CLIENT is None or not p.isConnected(physicsClientId=_WORKER_CLIENT):
        _WORKER_CLIENT = p.connect(p.DIRECT)
    return _WORKER_CLIENT


def run_rollout(task: RolloutTask) -> RolloutRecord:
    """Build the scenario in a fresh world and simulate it under the law (worker entry point).

    An impact that fails (:class:`~bullet_setimpact.errors.SetImpactError`: the law's outcome
    rejected, and with ``on_failure="fallback"`` the fallback's too) ends the rollout; the
    record then holds the reason and the events before it.
    """
    start = time.perf_counter()
    client = _client()
    p.resetSimulation(physicsClientId=client)
    simulator_policy = "fallback" if task.on_failure == "fallback" else "raise"
    rollout = make(
        task.scenario, client, law=task.law, seed=task.stream, params=task.params, duration=task.duration, on_failure=simulator_policy
    )
    scenario, simulator, steps = rollout.scenario, rollout.simulator, rollout.steps
    every = max(1, steps // ENERGY_SAMPLES)
    model = simulator.world.restrict([body for body in scenario.bodies.values() if body not in simulator.world.static_bodies])
    energy_time, energy, events = [], [], []
    failure = None
    stepping = time.perf_counter()
    for step in range(steps):
        try:
            produced = simulator.step()
        except SetImpactError as exc:
            failure = f"{type(exc).__name__}: {exc}"
            break
        events += [event_record(event, scenario) for event in produced]
        if step % every == 0 or step == steps - 1:
            energy_time.append(simulator.time)
            velocity = model.velocity()
            energy.append(0.5 * velocity @ model.configuration().mass_matrix() @ velocity)
    stepping_wall_time = time.perf_counter() - stepping
    return RolloutRecord(
        index=task.index,
        events=tuple(events),
        final=scenario.observe(),
        energy_time=np.array(energy_time),
        energy=np.array(energy),
        wall_time=time.perf_counter() - start,
        stepping_wall_time=stepping_wall_time,
        simulated_time=float(simulator.time),
        seed=task.seed,
        failure=failure,
    )


# --------------------------------------------------------------------------- driver
def monte_carlo(
    scenario: str | Path,
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
    on_failure: str = "record",
    retry_failed: bool = False,
) -> RolloutResults:
    """Run ``rollouts`` rollouts of ``scenario`` and collect their impacts and final states.

    Parameters
    ----------
    scenario : str or path
        A scenario name (:func:`bullet_setimpact.montecarlo.scenario.available`) or the path of a
        ``.py`` scenario script.
    rollouts : int
    seed : int
        Root seed; rollout ``i`` uses ``SeedSequence(seed).spawn(rollouts)[i]``.
    law : str, ImpactLaw or None
        A law name (``LAWS``), a law instance, or None for the scenario's own.
    executor : Executor, "serial" or None
        Any ``concurrent.futures.Executor`` (e.g. ``dask.distributed.Client(...).get_executor()``);
        "serial" runs in this process; None makes a process pool of ``workers`` (default: the
        machine's cores; ``workers=1`` runs in this process), rebuilt if a worker dies.  The
        pool forks on Linux, so scripts without a ``__main__`` guard, notebooks and stdin
        work; elsewhere it spawns, and a pool that cannot start stops at once naming the fix.
    out : path, optional
        Results directory, written rollout by rollout (see module docstring).
    duration : float, optional
        Simulated time per rollout [s] (default: the scenario's).
    resume : bool
        Reuse the rollouts already in ``out`` (the run's parameters must match), failed ones
        included unless ``retry_failed``.
    params : mapping, optional
        Scenario parameter overrides.
    workers : int, optional
        Size of the default process pool.
    progress : bool, optional
        Show a tqdm progress bar (default: when stderr is a terminal).
    on_failure : {"record", "raise", "fallback"}
        What a failed impact does: "record" ends that rollout, records it (index, seed,
        reason, events before) in ``RolloutResults.failures`` and goes on; "raise" stops the
        run with :class:`~bullet_setimpact.errors.ImpactFailure` naming the rollout and seed;
        "fallback" applies the Anitescu-Potra outcome instead (a rollout whose fallback
        fails too is recorded).
    retry_failed : bool
        On resume, run the recorded failed rollouts again.

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
    if on_failure not in ON_FAILURE:
        raise ValueError(f"on_failure must be one of {ON_FAILURE}, got {on_failure!r}")
    resolved = parameters(scenario, params)
    description, effective_duration = scenario_defaults(scenario, law, duration, resolved)
    config = {
        "scenario": str(scenario),
        "params": resolved,
        "law": law if law is None or isinstance(law, str) else repr(law),
        "law_description": description,
        "seed": seed,
        "rollouts": rollouts,
        "duration": effective_duration,
        "on_failure": on_failure,
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
            if record is not None and (record.failure is None or not retry_failed):
                records[index] = record
    pending = [
        RolloutTask(scenario, resolved, law, index, seed, children[index], duration, on_failure)
        for index in range(rollouts)
        if index not in records
    ]
    resumed = len(records)
    # closing the results: a raise or Ctrl-C in this loop stops the pool's workers at once (bullet_setimpact.montecarlo.pool)
    with _progress_bar(rollouts, resumed, progress) as bar, contextlib.closing(execute(run_rollout, pending, executor, workers)) as results:
        for record in results:
            if record.failure is not None and on_failure == "raise":
                raise ImpactFailure(
                    f"rollout {record.index} (seed {seed}) failed at t = {record.simulated_time:.4f} s: {record.failure}; "
                    "on_failure='record' (--on-failure record) records it and goes on"
                )
            records[record.index] = record
            if store is not None:
                store.save(record)
            bar.update(1)
    return RolloutResults([records[index] for index in range(rollouts)], config, resumed=resumed)


def scenario_defaults(
    scenario: str | Path, law: str | ImpactLaw | None, duration: float | None, params: Mapping[str, Any]
) -> tuple[str, float]:
    """The law a run uses, with its parameters (``repr``), and its duration [s]; the
    scenario's own law and duration are read from a build in a scratch client."""
    if law is not None and duration is not None:
        return repr(get_law(law)), float(duration)
    client = p.connect(p.DIRECT)
    try:
        built = build(scenario, client, params)
        return repr(get_law(law) if law is not None else built.law), float(duration if duration is not None else built.duration)
    finally:
        p.disconnect(client)


def _progress_bar(total: int, done: int, enabled: bool | None) -> Any:
    from tqdm import tqdm

    disable = not sys.stderr.isatty() if enabled is None else not enabled
    return tqdm(total=total, initial=done, desc="rollouts", unit="rollout", disable=disable)

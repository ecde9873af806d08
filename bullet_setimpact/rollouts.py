"""Monte Carlo rollouts over outcome sets, on any ``concurrent.futures.Executor``.

:func:`monte_carlo` runs a scenario ``rollouts`` times, each with its own random stream
from ``numpy.random.SeedSequence(seed).spawn(rollouts)``, so every rollout's result depends
only on its index: results are bit-identical whatever the executor (serial, a process pool,
a Dask cluster through ``Client(...).get_executor()``) and however many workers.

With ``out=DIR`` every finished rollout is written at once to a resumable results
directory (:mod:`bullet_setimpact.storage`).  A pool this module owns is rebuilt when one
of its worker processes dies.  The records are in :mod:`bullet_setimpact.records`.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import sys
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pybullet as p

from . import __version__
from .laws import ImpactLaw
from .records import EventRecord, RolloutRecord, RolloutResults, event_record
from .scenario import make, parameters
from .storage import RolloutStore
from .validation import positive_int

__all__ = ["EventRecord", "RolloutRecord", "RolloutResults", "RolloutStore", "RolloutTask", "monte_carlo", "run_rollout"]

logger = logging.getLogger("bullet_setimpact")

#: Times a pool owned by :func:`monte_carlo` is rebuilt after a worker died.
MAX_POOL_RESTARTS = 20
#: Kinetic-energy samples kept per rollout (the series is decimated to at most this).
ENERGY_SAMPLES = 500


# --------------------------------------------------------------------------- one rollout
@dataclass(frozen=True)
class RolloutTask:
    """What a worker needs to run rollout ``index`` (picklable)."""

    scenario: str | Path
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


def run_rollout(task: RolloutTask) -> RolloutRecord:
    """Build the scenario in a fresh world and simulate it under the law (worker entry point)."""
    start = time.perf_counter()
    client = _client()
    p.resetSimulation(physicsClientId=client)
    rollout = make(task.scenario, client, law=task.law, seed=task.seed, params=task.params, duration=task.duration)
    scenario, simulator, steps = rollout.scenario, rollout.simulator, rollout.steps
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

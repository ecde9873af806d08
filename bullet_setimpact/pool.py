"""Running rollout tasks on an executor: in this process, on any ``concurrent.futures``
executor (Dask's included), or on a process pool owned here.

The owned pool uses the ``fork`` start method on Linux: workers inherit the parent's
modules, so a script without an ``if __name__ == "__main__":`` guard, a notebook and
``python -`` (stdin) all work, and a law class defined in ``__main__`` reaches the workers.
Elsewhere (macOS, Windows) it uses ``spawn``, which re-imports the main script in every
worker; if the pool breaks before its first result there, it stops at once with one line
naming the fix instead of restarting.  A pool whose worker died mid-run (a crash in Bullet)
is rebuilt, at most :data:`MAX_POOL_RESTARTS` times.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import TypeVar

logger = logging.getLogger("bullet_setimpact")

#: Times a pool owned here is rebuilt after a worker died.
MAX_POOL_RESTARTS = 20

Task = TypeVar("Task")
Result = TypeVar("Result")


def start_method() -> str:
    """``"fork"`` on Linux, ``"spawn"`` elsewhere (see the module docstring)."""
    return "fork" if sys.platform.startswith("linux") else "spawn"


def execute(
    function: Callable[[Task], Result], tasks: Sequence[Task], executor: Executor | str | None, workers: int | None
) -> Iterable[Result]:
    """Yield ``function(task)`` for each task as it completes.

    ``executor`` is "serial" (this process), any ``Executor``, or None for a pool of
    ``workers`` processes (default: the machine's cores; 1 runs in this process).
    """
    if not tasks:
        return
    if executor == "serial" or (executor is None and (workers or os.cpu_count() or 1) == 1):
        for task in tasks:
            yield function(task)
        return
    if isinstance(executor, Executor):
        submitted = [executor.submit(function, task) for task in tasks]
        for done in as_completed(submitted):
            yield done.result()
        return
    if executor is not None:
        raise ValueError(f"executor must be a concurrent.futures.Executor, 'serial' or None, got {executor!r}")
    remaining = dict(enumerate(tasks))
    method = start_method()
    for attempt in range(MAX_POOL_RESTARTS + 1):
        pool = ProcessPoolExecutor(max_workers=workers or os.cpu_count() or 1, mp_context=multiprocessing.get_context(method))
        started = False
        try:
            futures: dict[Future, int] = {pool.submit(function, task): key for key, task in remaining.items()}
            for future in as_completed(futures):
                result = future.result()
                started = True
                del remaining[futures[future]]
                yield result
            return
        except BrokenProcessPool:
            if method == "spawn" and attempt == 0 and not started:
                raise RuntimeError(
                    "the rollout pool could not start its workers; with the 'spawn' start method, put the code that "
                    'calls monte_carlo under `if __name__ == "__main__":`, or pass workers=1 to run in this process'
                ) from None
            logger.warning("a rollout worker died; restarting the pool for the %d unfinished rollouts", len(remaining))
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
    raise RuntimeError(f"the rollout pool broke more than {MAX_POOL_RESTARTS} times; {len(remaining)} rollouts unfinished")

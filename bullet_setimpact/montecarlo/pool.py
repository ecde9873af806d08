"""Running rollout tasks on an executor: in this process, on any ``concurrent.futures``
executor (Dask's included), or on a process pool owned here.

The owned pool uses the ``fork`` start method on Linux: workers inherit the parent's
modules, so a script without an ``if __name__ == "__main__":`` guard, a notebook and
``python -`` (stdin) all work, and a law class defined in ``__main__`` reaches the workers.
Elsewhere (macOS, Windows) it uses ``spawn``, which re-imports the main script in every
worker; if the pool breaks before its first result there, it stops at once with one line
naming the fix instead of restarting.  A pool whose worker died mid-run (a crash in Bullet)
is rebuilt, at most :data:`MAX_POOL_RESTARTS` times.

Stopping: when the caller stops early (Ctrl-C, an exception, or it closes the generator of
:func:`execute`), the owned pool's queued rollouts are cancelled and its workers killed at
once: the rollouts in flight are lost (a resumed run redoes them with the same seeds), and
nothing keeps computing results nobody will save.  A worker whose parent died without that
(``SIGKILL``) exits by itself within :data:`PARENT_POLL` seconds instead of waiting forever
on the pool's pipes.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Generator, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import TypeVar

logger = logging.getLogger("bullet_setimpact")

#: Times a pool owned here is rebuilt after a worker died.
MAX_POOL_RESTARTS = 20
#: How often [s] a worker of the owned pool checks that the process that started it still lives.
PARENT_POLL = 0.5

Task = TypeVar("Task")
Result = TypeVar("Result")


def start_method() -> str:
    """``"fork"`` on Linux, ``"spawn"`` elsewhere (see the module docstring)."""
    return "fork" if sys.platform.startswith("linux") else "spawn"


def _worker_setup(parent: int) -> None:
    """Worker initializer: ``SIGTERM`` ends the worker (a forked worker inherits the parent's
    handler, e.g. the CLI's, which would only interrupt the rollout in hand), and a daemon
    thread ends it once ``parent`` is no longer its parent (it died and the worker was
    re-parented), polling every :data:`PARENT_POLL` s."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _stop(pool: ProcessPoolExecutor) -> None:
    """Cancel the pool's queued tasks and kill its workers without waiting for the running ones.

    ``ProcessPoolExecutor`` has no public way to stop running tasks before Python 3.14
    (``terminate_workers``): its ``_processes`` (pid -> ``multiprocessing.Process``), which
    ``shutdown`` clears, is read first; an executor without it is only shut down."""
    workers = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for worker in workers:
        if worker.is_alive():
            worker.kill()  # SIGKILL: a worker's KeyboardInterrupt (Ctrl-C reaches the whole group) only ends its task


def execute(
    function: Callable[[Task], Result], tasks: Sequence[Task], executor: Executor | str | None, workers: int | None
) -> Generator[Result, None, None]:
    """Yield ``function(task)`` for each task as it completes (close the generator to stop early).

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
        try:
            for done in as_completed(submitted):
                yield done.result()
        finally:  # stopped early: what has not started is not run (on a Dask cluster too)
            for future in submitted:
                future.cancel()
        return
    if executor is not None:
        raise ValueError(f"executor must be a concurrent.futures.Executor, 'serial' or None, got {executor!r}")
    remaining = dict(enumerate(tasks))
    method = start_method()
    for attempt in range(MAX_POOL_RESTARTS + 1):
        pool = ProcessPoolExecutor(
            max_workers=workers or os.cpu_count() or 1,
            mp_context=multiprocessing.get_context(method),
            initializer=_worker_setup,
            initargs=(os.getpid(),),
        )
        started = False
        early = True  # until every task is done or the pool broke: the caller stopped
        try:
            futures: dict[Future, int] = {pool.submit(function, task): key for key, task in remaining.items()}
            for future in as_completed(futures):
                result = future.result()
                started = True
                del remaining[futures[future]]
                yield result
            early = False
            return
        except BrokenProcessPool:
            early = False
            if method == "spawn" and attempt == 0 and not started:
                raise RuntimeError(
                    "the rollout pool could not start its workers; with the 'spawn' start method, put the code that "
                    'calls monte_carlo under `if __name__ == "__main__":`, or pass workers=1 to run in this process'
                ) from None
            logger.warning("a rollout worker died; restarting the pool for the %d unfinished rollouts", len(remaining))
        finally:
            if early:
                _stop(pool)
            elif remaining:  # broken: a new pool runs the unfinished rollouts
                pool.shutdown(wait=False, cancel_futures=True)
            else:  # all done: join the pool's threads now, or Python 3.11's exit races their teardown
                pool.shutdown(wait=True)
    raise RuntimeError(f"the rollout pool broke more than {MAX_POOL_RESTARTS} times; {len(remaining)} rollouts unfinished")

"""One BLAS thread for the many small products of an impact or an outcome set.

Threaded BLAS (OpenBLAS, as numpy and scipy ship it) hands even a 40x34 product or a
Cholesky solve to its worker threads; on a machine whose other cores are busy (a Monte
Carlo run on every core, another job) those threads wait for a core, and a humanoid's
impact event measured 3.7 ms with one BLAS thread against 5.8-7.5 ms (median, up to 20 ms)
with two on a 2-core machine with one core loaded.  Algorithm 2's batched products run
2-30x slower threaded.  :func:`one_blas_thread` limits BLAS to one thread for a block and
restores the previous setting afterwards (threadpoolctl, about 10 us a block).
"""

from __future__ import annotations

import functools
from contextlib import AbstractContextManager
from typing import Any

from threadpoolctl import ThreadpoolController


@functools.cache
def blas_controller() -> ThreadpoolController:
    """The process's BLAS libraries, found once (the scan takes about 3 ms)."""
    return ThreadpoolController()


def one_blas_thread() -> AbstractContextManager[Any]:
    """A context manager that runs its block on one BLAS thread."""
    return blas_controller().limit(limits=1, user_api="blas")

"""One BLAS thread for the many small products of an impact or an outcome set.

Threaded BLAS (OpenBLAS, as numpy and scipy ship it) hands even a 40x34 product or a
Cholesky solve to its worker threads.  On a machine whose other cores are busy (a Monte
Carlo run on every core, another job), those threads wait for a core.  An impact's products
are small, so one thread is faster there (docs/performance.md has the measurements).

:func:`one_blas_thread` limits BLAS to one thread for a block.  It restores the previous
setting afterwards (threadpoolctl).
"""

from __future__ import annotations

import functools
from contextlib import AbstractContextManager
from typing import Any

from threadpoolctl import ThreadpoolController


@functools.cache
def blas_controller() -> ThreadpoolController:
    """The process's BLAS libraries, found once: the scan is slow next to one block."""
    return ThreadpoolController()


def one_blas_thread() -> AbstractContextManager[Any]:
    """A context manager that runs its block on one BLAS thread."""
    return blas_controller().limit(limits=1, user_api="blas")

"""Randomized branch sampling of the step LCP for the set-valued Routh law (journal Sec. 5).

Each step of Algorithm 1 may have several LCP solutions; these solvers pick one at random
so that no branch is lost to a deterministic pivot rule.  Both take the step LCP as
``LCP(W, R u)`` with a fixed ``W`` and ``u = [lambda_n_max; v]``:

- :class:`LemkeSolver` solves sample by sample with randomized Lemke (no cache);
- :class:`BatchedLCPSolver` keeps the complementary bases Lemke ends in and tests
  thousands of right-hand sides against them with one matrix product each (``W`` is fixed
  during an impact, only ``w`` moves).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from ..errors import LemkeError
from .lcp import RESIDUAL_TOL, LCPSolution
from .lcp_solve import solve_lcp

#: Upper bounds on the LCP unknowns as a function of the parameter vector ``u`` (see
#: :func:`~bullet_setimpact.laws.routh.step_lcp_bounds`), for the complete fallback.
BoundsMap = Callable[[np.ndarray], np.ndarray]

#: Samples per batched step of Algorithm 1 that always go to Lemke, to discover new LCP solutions.
EXPLORE_PER_STEP = 4
#: Parameter columns per stacked product of :func:`_feasibility`.
COLUMN_BLOCK = 1024
#: Cached bases tested together (one stacked product per column block) when the most-hit ones all fail a sample.
REST_BLOCK = 8
#: Basic values computed per block of the rest of the cache once few samples are left.
REST_VALUES = 2**18
#: Rows of a cached basis's ``response`` that screen samples before its full test (any rows are
#: correct: a negative one proves infeasibility; they are chosen to be often negative).
SCREEN_ROWS = 3
#: Samples on which a basis's screening rows are chosen.
SCREEN_PROBES = 128
#: Fewest samples the most-hit bases, or a block of the rest of the cache, are screened on (below,
#: testing in full is cheaper).  Screening pays on the most-hit bases too, since a sample passes
#: only about two of 16 (docs/performance.md).
SCREEN_MIN_SAMPLES = 1024


def random_lemke(
    W: np.ndarray,
    w: np.ndarray,
    rng: np.random.Generator,
    tol: float = RESIDUAL_TOL,
    bounds: np.ndarray | Callable[[], np.ndarray] | None = None,
    complete: bool = True,
) -> LCPSolution:
    """:func:`~bullet_setimpact.core.lcp_solve.solve_lcp` starting from random covering vectors drawn from ``rng``.

    Lemke with up to ``LEMKE_ATTEMPTS`` random covering vectors; if all fail, the
    deterministic stages of :func:`~bullet_setimpact.core.lcp_solve.solve_lcp` (with ``bounds``, an array
    or a callable evaluated only then) return one valid solution (``solution.fallback`` is then True),
    or with ``complete=False`` (an exploration probe) :class:`~bullet_setimpact.errors.LemkeError` is raised.
    """
    return solve_lcp(W, w, rng=rng, bounds=bounds, tol=tol, complete=complete)


def _deferred_bounds(bounds: BoundsMap | None, u: np.ndarray) -> Callable[[], np.ndarray] | None:
    """``bounds(u)`` as a callable for :func:`random_lemke`, evaluated only if its complete fallback runs."""
    if bounds is None:
        return None
    return lambda: bounds(u)


def sparsified(u: np.ndarray, sparsify: np.ndarray, rng: np.random.Generator) -> np.ndarray | None:
    """``u`` with a random non-empty subset of the ``sparsify`` entries set to zero (None if empty)."""
    if sparsify.size == 0:
        return None
    mask = rng.random(sparsify.size) < 0.5
    mask[rng.integers(sparsify.size)] = True
    alternative = u.copy()
    alternative[sparsify[mask]] = 0.0
    return alternative


def active_rows(mask: np.ndarray) -> np.ndarray | slice:
    """The rows where ``mask`` holds: a full slice when it holds everywhere (cheaper to index
    than the equivalent ``arange``), else their indices."""
    return slice(None) if mask.all() else np.flatnonzero(mask)


def _switchable_entries(sparsify: np.ndarray, switchable: np.ndarray | None, sample: int) -> np.ndarray:
    """The ``sparsify`` entries sample ``sample`` may switch off (all when ``switchable`` is None)."""
    if switchable is None or sparsify.size == 0:
        return sparsify
    return sparsify[switchable[sample]]


def _output(out: np.ndarray | None, shape: tuple[int, int]) -> np.ndarray:
    """``out`` (checked to have ``shape``) or a new array of it, for a solver's ``z``."""
    if out is None:
        return np.empty(shape)
    if out.shape != shape or out.dtype != float:
        raise ValueError(f"out must be a float array of shape {shape}, got {out.dtype} {out.shape}")
    return out


def _parameter_rows(u: np.ndarray, rhs_map: np.ndarray | None) -> np.ndarray:
    """``u`` as a float array of shape ``(S, p)`` matching ``rhs_map`` (shape ``(n, p)``), finite."""
    u = np.asarray(u, dtype=float)
    assert rhs_map is not None  # set in __post_init__
    if u.ndim != 2 or u.shape[1] != rhs_map.shape[1]:
        raise ValueError(f"u must have shape (samples, {rhs_map.shape[1]}) to match rhs_map, got {u.shape}")
    if not np.isfinite(u).all():
        raise ValueError("u must be finite (no NaN or inf)")
    return u


@dataclass
class SolverStatistics:
    """Counters of an LCP batch solver (cumulative over its lifetime)."""

    solves: int = 0
    cache_hits: int = 0
    lemke_calls: int = 0
    bases: int = 0
    #: Solves in which randomized Lemke failed and a deterministic stage of ``solve_lcp`` answered.
    fallbacks: int = 0
    #: Sparsified exploration probes dropped because randomized Lemke failed on them (a probe never
    #: runs the deterministic stages: see :class:`LemkeSolver`).
    dropped_probes: int = 0


Answer = TypeVar("Answer")


def _probe(stats: SolverStatistics, attempt: Callable[[], Answer]) -> Answer | None:
    """``attempt()``, a sparsified exploration probe's randomized Lemke alone (``complete=False``),
    or None when it raises :class:`~bullet_setimpact.errors.LemkeError` (counted in ``stats.dropped_probes``)."""
    try:
        return attempt()
    except LemkeError:
        stats.dropped_probes += 1
        return None


def _counted_lemke(
    solver: LemkeSolver | BatchedLCPSolver, u: np.ndarray, rng: np.random.Generator, w: np.ndarray | None = None, complete: bool = True
) -> LCPSolution:
    """:func:`random_lemke` on ``w = R u`` (given or computed) with ``solver``'s bounds; counts the
    call and any fallback in ``solver.stats``."""
    assert solver.rhs_map is not None  # set in __post_init__
    solver.stats.lemke_calls += 1
    solution = random_lemke(solver.W, solver.rhs_map @ u if w is None else w, rng, solver.tol, _deferred_bounds(solver.bounds, u), complete)
    solver.stats.fallbacks += solution.fallback
    return solution


@dataclass
class LemkeSolver:
    """Solve ``LCP(W, R u)`` sample by sample with randomized Lemke (no cache).

    Each sample draws its branch: with probability 1/2 it first tries the final basis of
    Lemke on a *sparsified* parameter vector (a random subset of the ``sparsify`` entries
    zeroed), kept if that basis is feasible for the true ``u``; otherwise, or else, Lemke
    with a random covering vector.  The sparsified solve reaches solutions Lemke's path
    from the ray never ends in.  Same interface as :class:`BatchedLCPSolver`.

    The sparsified solve is a probe the sample can do without: it runs randomized Lemke alone
    (``complete=False``), and if that fails the probe is dropped (``stats.dropped_probes``)
    instead of running the deterministic stages of ``solve_lcp``, which answer only the LCPs
    whose solution is required: on a contact-rich LCP those stages can take seconds, for an
    answer the sample does not need.
    """

    W: np.ndarray
    rhs_map: np.ndarray | None = None
    sparsify: tuple[int, ...] = ()
    tol: float = RESIDUAL_TOL
    bounds: BoundsMap | None = None
    stats: SolverStatistics = field(default_factory=SolverStatistics)

    def __post_init__(self) -> None:
        self.W = np.asarray(self.W, dtype=float)
        self.rhs_map = np.eye(self.W.shape[0]) if self.rhs_map is None else np.asarray(self.rhs_map, dtype=float)
        self._sparsify = np.asarray(self.sparsify, dtype=int)

    def solve(
        self,
        u: np.ndarray,
        rng: np.random.Generator,
        explore: int = 0,
        switchable: np.ndarray | None = None,
        out: np.ndarray | None = None,
        entries: slice = slice(None),
        group: int = 0,
    ) -> np.ndarray:
        """Solve every row of ``u`` (shape ``(S, p)``); returns the ``entries`` of each ``z``, shape
        ``(S, len(entries))`` (all ``n`` by default; in ``out`` if given).

        ``switchable`` (shape ``(S, len(sparsify))``, default all True) says which
        ``sparsify`` entries each sample may switch off; ``group`` has no effect (no cache to rank).
        """
        u = _parameter_rows(u, self.rhs_map)
        z = _output(out, (u.shape[0], len(range(self.W.shape[0])[entries])))
        for i, sample in enumerate(u):
            z[i] = self._solve_one(sample, _switchable_entries(self._sparsify, switchable, i), rng)[entries]
        self.stats.solves += u.shape[0]
        return z

    def _solve_one(self, sample: np.ndarray, allowed: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        assert self.rhs_map is not None  # set in __post_init__
        w = self.rhs_map @ sample
        alternative = sparsified(sample, allowed, rng) if rng.random() < 0.5 else None
        found = None if alternative is None else _probe(self.stats, lambda: _counted_lemke(self, alternative, rng, complete=False))
        if found is not None and found.basis_inverse is not None:
            x = found.basis_inverse @ w
            if (x >= -self.tol * (1.0 + np.abs(w).max())).all():
                return np.maximum(np.where(found.basis, x, 0.0), 0.0)
        return _counted_lemke(self, sample, rng, w).z


#: ``choice`` of a sample answered by an uncached solution in :meth:`BatchedLCPSolver.solve`.
UNCACHED = -2


@dataclass
class _Workspace:
    """One flat buffer per name, reused by every call (grown when too small).

    A batched step's large temporaries (a few MB each) would otherwise come as fresh pages from
    the operating system every step, which on a virtual machine costs more than the arithmetic
    done on them.  A name's array is valid until the next request of that name."""

    buffers: dict[str, np.ndarray] = field(default_factory=dict)

    def array(self, name: str, shape: tuple[int, ...], dtype: type = float) -> np.ndarray:
        """A C-contiguous uninitialized array of ``shape`` in the buffer ``name``."""
        size = math.prod(shape)
        buffer = self.buffers.get(name)
        if buffer is None or buffer.size < size or buffer.dtype != dtype:
            buffer = self.buffers[name] = np.empty(size, dtype)
        return buffer[:size].reshape(shape)


def _feasibility(responses: np.ndarray, columns: np.ndarray, scale: np.ndarray, workspace: _Workspace | None = None) -> np.ndarray:
    """``feasible[k, s]``: every basic value ``responses[k] @ columns[:, s]`` is ``>= -scale[s]``
    (``responses`` of shape ``(K, n, p)``, ``columns`` ``(p, S)``; returns shape ``(K, S)``).

    One stacked product per :data:`COLUMN_BLOCK` columns, so the ``K n`` values per column
    stay in cache instead of going through memory."""
    count, n, p = responses.shape
    stacked = responses.reshape(count * n, p)
    feasible = np.empty((count, columns.shape[1]), dtype=bool)
    if count == 0:
        return feasible
    bound = -scale
    lowest = np.empty((count, min(COLUMN_BLOCK, columns.shape[1])))  # each block's smallest basic values
    for begin in range(0, columns.shape[1], COLUMN_BLOCK):
        block = slice(begin, begin + COLUMN_BLOCK)
        width = min(COLUMN_BLOCK, columns.shape[1] - begin)
        out = None if workspace is None else workspace.array("values", (count * n, width))
        values = np.matmul(stacked, columns[:, block], out=out).reshape(count, n, width)
        np.greater_equal(np.minimum.reduce(values, axis=1, out=lowest[:, :width]), bound[block], out=feasible[:, block])
    return feasible


def _uniform_choice(feasible: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """For each column of ``feasible`` (shape ``(K, S)``), a row drawn uniformly among its True ones
    (-1 if none), from one uniform ``u`` per column (``S`` draws from ``rng``; none when ``K = 0``).

    A column with ``c > 0`` True rows takes its ``floor(u c)``-th True row, counting from 0.
    ``u`` is uniform on the grid ``j 2^-53``, ``0 <= j < 2^53``, so in exact arithmetic
    ``floor(u c) = i`` for the ``j`` in ``[i 2^53 / c, (i + 1) 2^53 / c)``, a share ``1 / c`` of the
    grid up to one point.  Rounding ``u c`` errs by at most half an ulp of a number below ``c``,
    less than the spacing ``c 2^-53`` of the scaled grid, so it moves each boundary by at most one
    point: each ``i`` in ``0 .. c-1`` has probability ``1 / c`` to within ``3 2^-53`` (exactly for
    ``c`` a power of two, where ``u c`` is exact), and ``floor(u c) < c`` (``u <= 1 - 2^-53``, and
    ``c (1 - 2^-53)`` rounds below ``c``).  So each feasible row is drawn with probability ``1 / c``: the
    distribution of drawing one i.i.d. uniform key per feasible row and taking the largest (each
    row holds the largest with probability ``1 / c`` by symmetry), from one draw per column
    instead of ``c``."""
    rows, samples = feasible.shape
    if not rows:
        return np.full(samples, -1)
    small = np.min_scalar_type(rows)
    count = np.add.reduce(feasible, axis=0, dtype=small)  # True rows per column
    target = (rng.random(samples) * count).astype(small)  # floor: both factors are non-negative
    seen = np.zeros(samples, dtype=small)  # True rows so far
    before = np.empty(samples, dtype=bool)
    before_chosen = np.zeros(samples, dtype=small)  # rows after which at most target True rows are seen
    for row in feasible:
        np.add(seen, row, out=seen)
        np.less_equal(seen, target, out=before)
        np.add(before_chosen, before, out=before_chosen)
    choice = before_chosen.astype(np.intp)
    choice[count == 0] = -1
    return choice


@dataclass
class _CachedBasis:
    basis: np.ndarray  # (n,) bool
    row: int  # its row in the solver's stacked responses (basic values x = response @ u) and screening rows
    screened: bool = False  # its screening rows are chosen (see _choose_screens)


@dataclass
class _Ranking:
    """One group's order of the cache, most-hit first (``entries``), and its hits by entry row."""

    entries: list[_CachedBasis] = field(default_factory=list)
    hits: list[int] = field(default_factory=list)


@dataclass
class _Stack:
    """Arrays of one shape kept as the rows of one array, so a group of them is one take instead of
    one ``np.array`` over a list (the cache's order changes with every solve; their rows do not)."""

    shape: tuple[int, ...]
    data: np.ndarray = field(init=False)
    count: int = 0

    def __post_init__(self) -> None:
        self.data = np.empty((16, *self.shape))

    def append(self, value: np.ndarray) -> None:
        """Store ``value`` in the next row (doubling the capacity when full)."""
        if self.count == len(self.data):
            grown = np.empty((2 * len(self.data), *self.shape))
            grown[: self.count] = self.data[: self.count]
            self.data = grown
        self.data[self.count] = value
        self.count += 1


def _screened_feasibility(
    responses: np.ndarray, screens: np.ndarray, columns: np.ndarray, scale: np.ndarray, workspace: _Workspace | None = None
) -> np.ndarray:
    """:func:`_feasibility`, computing first only the ``screens`` rows (shape ``(K, r, p)``, rows of
    ``responses``) of each basis and the full ``responses[k] @ columns`` only on the columns those
    rows pass.  A screening row below ``-scale`` proves the basis infeasible, so the answer is
    :func:`_feasibility`'s (a product of another shape may round a value differently by an ulp,
    which matters only for a value within an ulp of ``-scale``)."""
    feasible = _feasibility(screens, columns, scale, workspace)
    for k in np.flatnonzero(feasible.any(axis=1)):
        passing = np.flatnonzero(feasible[k])
        feasible[k, passing] = (responses[k] @ columns[:, passing]).min(axis=0) >= -scale[passing]
    return feasible


def _choose_screens(entries: list[_CachedBasis], responses: _Stack, screens: _Stack, columns: np.ndarray, scale: np.ndarray) -> None:
    """Give each entry without them the :data:`SCREEN_ROWS` rows of its ``response`` most often below
    ``-scale`` on the first :data:`SCREEN_PROBES` ``columns`` (greedily: each row counts only the
    columns the rows before it let pass), stored in its row of ``screens`` (of ``responses``'s rows)."""
    new = [entry for entry in entries if not entry.screened]
    if not new:
        return
    probes = columns[:, :SCREEN_PROBES]
    stacked = responses.data[[entry.row for entry in new]]
    violated = stacked @ probes < -scale[:SCREEN_PROBES]
    passing = np.ones((len(new), probes.shape[1]), dtype=bool)
    rows = np.empty((len(new), SCREEN_ROWS), dtype=int)
    every = np.arange(len(new))
    for k in range(SCREEN_ROWS):
        rows[:, k] = (violated & passing[:, None, :]).sum(axis=2).argmax(axis=1)
        passing &= ~violated[every, rows[:, k]]
    for entry, chosen in zip(new, np.take_along_axis(stacked, rows[:, :, None], axis=1), strict=True):
        screens.data[entry.row] = chosen
        entry.screened = True


@dataclass
class BatchedLCPSolver:
    """Solve ``LCP(W, R u)`` for one fixed ``W`` and many parameter vectors ``u``.

    The right-hand side is ``w = R u`` with a fixed ``R`` (shape ``(n, p)``; identity by
    default), so a cached basis answers a whole batch with one ``(n, p) @ (p, S)``
    product.  Bases come from :func:`lemke`'s final tableau and are never singular.

    For each sample the solver picks uniformly at random among the feasible bases of
    the ``candidates`` most-hit cached bases (an LCP with several solutions therefore
    keeps all its branches instead of collapsing onto one pivot rule); samples with no
    feasible candidate are tested against the rest of the cache, and only a true miss
    calls Lemke, with a random covering vector.  ``explore`` further samples per call go
    to Lemke to discover bases the cache lacks: once on their own ``u`` and once on a
    sparsified ``u`` (see :class:`LemkeSolver`).

    Every basis serves every call, but hits are counted per ``group`` (a call's argument):
    each group ranks the cache by its own hits.  The Routh law's groups are Algorithm 1's
    steps, whose samples hit different bases: ranked by its own hits, a step's most-hit
    bases are the ones its samples need, and fewer samples go past them to the rest of the
    cache (docs/performance.md).

    Parameters
    ----------
    W : ndarray, shape (n, n)
    rhs_map : ndarray, shape (n, p), optional
        ``R`` in ``w = R u``.
    sparsify : tuple of int
        Entries of ``u`` that exploration may switch off.
    candidates : int
        Number of most-hit bases among which a feasible one is drawn at random.
    tol : float
        Relative residual tolerance (solutions within it are clipped to ``z >= 0``).
    bounds : callable, optional
        ``u -> upper bounds on z`` for the complete fallback of :func:`random_lemke`.
        A fallback solution on a singular basis (no inverse) answers its own sample only.
    """

    W: np.ndarray
    rhs_map: np.ndarray | None = None
    sparsify: tuple[int, ...] = ()
    candidates: int = 16
    tol: float = RESIDUAL_TOL
    bounds: BoundsMap | None = None
    stats: SolverStatistics = field(default_factory=SolverStatistics)

    def __post_init__(self) -> None:
        self.W = np.asarray(self.W, dtype=float)
        n = self.W.shape[0]
        self.rhs_map = np.eye(n) if self.rhs_map is None else np.asarray(self.rhs_map, dtype=float)
        self._rhs_norm = float(np.max(np.sum(np.abs(self.rhs_map), axis=1), initial=0.0))
        self._sparsify = np.asarray(self.sparsify, dtype=int)
        self._bases: list[_CachedBasis] = []  # in the order found
        self._rankings: dict[int, _Ranking] = {}
        # The ranking of the current call's group: its entries (a cache index is a position in
        # them), its hits by entry row, and the cache index of each basis (by its bytes).
        self._cache: list[_CachedBasis] = []
        self._hits: list[int] = []
        self._position: dict[bytes, int] = {}
        self._responses = _Stack((n, self.rhs_map.shape[1]))
        self._screens = _Stack((SCREEN_ROWS, self.rhs_map.shape[1]))
        self._workspace = _Workspace()

    @property
    def bases(self) -> list[np.ndarray]:
        """The cached complementary bases, in the order found."""
        return [entry.basis for entry in self._bases]

    def ranked_bases(self, group: int = 0) -> list[np.ndarray]:
        """The cached complementary bases in ``group``'s ranking, most-hit first (unhit ones in the order found)."""
        ranking = self._rankings.get(group, _Ranking())
        return [entry.basis for entry in ranking.entries] + self.bases[len(ranking.entries) :]

    def _rank(self, group: int) -> None:
        """Make ``group``'s ranking the current one, the bases found since its last call appended unhit."""
        ranking = self._rankings.setdefault(group, _Ranking())
        ranking.entries.extend(self._bases[len(ranking.entries) :])  # it holds the first bases found, in its order
        ranking.hits.extend([0] * (len(self._bases) - len(ranking.hits)))
        self._cache, self._hits = ranking.entries, ranking.hits
        self._position = {entry.basis.tobytes(): index for index, entry in enumerate(self._cache)}

    def solve(
        self,
        u: np.ndarray,
        rng: np.random.Generator,
        explore: int = 0,
        switchable: np.ndarray | None = None,
        out: np.ndarray | None = None,
        entries: slice = slice(None),
        group: int = 0,
    ) -> np.ndarray:
        """Solve the batch (``u`` of shape ``(S, p)``); returns the ``entries`` of each ``z``, shape
        ``(S, len(entries))`` (all ``n`` by default; in ``out`` if given).

        ``explore`` samples also go to Lemke; ``switchable`` (shape ``(S, len(sparsify))``,
        default all True) limits which ``sparsify`` entries their exploration may zero.
        ``group`` names the hit ranking the candidates come from and the hits go to.
        """
        u = _parameter_rows(u, self.rhs_map)
        samples = u.shape[0]
        width = len(range(self.W.shape[0])[entries])
        if samples == 0:
            return np.zeros((0, width))
        self._rank(group)
        columns = u.T  # contiguous when the caller built u as the transpose of its columns (Routh's integrate)
        if not columns.flags.c_contiguous:
            columns = self._workspace.array("columns", u.T.shape)
            np.copyto(columns, u.T)
        scale = self.tol * (1.0 + self._rhs_norm * np.abs(columns, out=self._workspace.array("magnitudes", columns.shape)).max(axis=0))
        top = self._cache[: self.candidates]
        rows = [entry.row for entry in top]
        responses = self._responses.data[rows]  # (K, n, p)
        if samples >= SCREEN_MIN_SAMPLES:
            _choose_screens(top, self._responses, self._screens, columns, scale)
            feasible_top = _screened_feasibility(responses, self._screens.data[rows], columns, scale, self._workspace)
        else:
            feasible_top = _feasibility(responses, columns, scale, self._workspace)
        choice = _uniform_choice(feasible_top, rng)
        pending = np.flatnonzero(choice < 0)
        if pending.size and len(self._cache) > self.candidates:
            choice[pending] = self._first_feasible(self.candidates, columns[:, pending], scale[pending])
        self.stats.cache_hits += int((choice >= 0).sum())

        explored = rng.choice(samples, size=min(explore, samples), replace=False) if explore else np.empty(0, int)
        direct: dict[int, np.ndarray] = {}  # samples answered by an uncacheable fallback solution
        for i in explored:
            found = self._explore(u[i], _switchable_entries(self._sparsify, switchable, i), scale[i], rng)
            if isinstance(found, np.ndarray):
                direct[i], choice[i] = found, UNCACHED
            else:
                choice[i] = found
        self._solve_misses(u, columns, scale, choice, direct, rng)

        z = _output(out, (samples, width))  # every row is written below
        for i, solution in direct.items():
            z[i] = solution[entries]
        # Each basis's samples in increasing order (a stable sort; on 16-bit keys numpy's is a radix sort),
        # gathered once; each basis's product then fills its own slice of the basic values.
        order = np.argsort(choice.astype(np.int16) if len(self._cache) < 2**15 else choice, kind="stable")
        counts = np.bincount(choice - UNCACHED)  # cache index i was chosen counts[i - UNCACHED] times
        ends = np.cumsum(counts) - int(counts[:-UNCACHED].sum())  # in the cached samples
        cached = order[samples - ends[-1] :]
        gathered = np.take(columns, cached, axis=1, out=self._workspace.array("gathered", (columns.shape[0], cached.size)), mode="clip")
        basic = self._workspace.array("basic", (self.W.shape[0], cached.size))
        for index in np.flatnonzero(counts[-UNCACHED:]).tolist():
            count, end = int(counts[index - UNCACHED]), int(ends[index - UNCACHED])
            entry = self._cache[index]
            self._hits[entry.row] += count
            np.matmul(self._response(entry), gathered[:, end - count : end], out=basic[:, end - count : end])
            basic[~entry.basis, end - count : end] = 0.0  # zeroing rows in place: cheaper than a np.where over the transpose
        z[cached] = basic[entries].T
        self.stats.solves += samples
        hits = self._hits
        self._cache.sort(key=lambda entry: -hits[entry.row])
        self.stats.bases = len(self._bases)
        return np.maximum(z, 0.0, out=z)

    def _response(self, entry: _CachedBasis) -> np.ndarray:
        """``(n, p)``: the basic values of ``entry``'s basis are ``response @ u`` (a view of its row)."""
        return self._responses.data[entry.row]

    def _solve_misses(
        self,
        u: np.ndarray,
        columns: np.ndarray,
        scale: np.ndarray,
        choice: np.ndarray,
        direct: dict[int, np.ndarray],
        rng: np.random.Generator,
    ) -> None:
        """Lemke on the first sample still without a basis (``choice == -1``), its basis then answering
        every later such sample it is feasible for; repeated until none is left (updates ``choice``
        and ``direct`` in place).

        Each Lemke basis is tested on the columns of the samples that were pending at the start, masked
        by those still open; the columns are compacted once fewer than half of them are open (one
        product over the pending columns per Lemke call, and a few gathers in all instead of one per call)."""
        pending = np.flatnonzero(choice == -1)
        left, left_scale = columns[:, pending], scale[pending]
        open_ = np.ones(pending.size, dtype=bool)  # the columns of samples still without a basis
        first, remaining = 0, pending.size
        while remaining:
            i = pending[first]
            solved = self._lemke_index(u[i], rng)
            if isinstance(solved, LCPSolution):
                direct[i], choice[i] = solved.z, UNCACHED
                open_[first] = False
                remaining -= 1
            else:
                answered = _feasibility(self._response(self._cache[solved])[None], left, left_scale, self._workspace)[0]
                answered &= open_
                answered[first] = True  # the basis Lemke found for sample i
                choice[pending[answered]] = solved
                open_ &= ~answered
                remaining -= int(np.count_nonzero(answered))
            if remaining and 2 * remaining < open_.size:
                pending, left, left_scale = pending[open_], left[:, open_], left_scale[open_]
                open_ = np.ones(remaining, dtype=bool)
            first = int(open_.argmax()) if remaining else 0

    def _first_feasible(self, first: int, columns: np.ndarray, scale: np.ndarray) -> np.ndarray:
        """For each column ``u``, the first cache index from ``first`` on whose basis is feasible
        (all basic values ``>= -scale``), or -1.

        Blocks of bases are tested in cache order, each only on the columns the blocks before it
        left without one; a block holds at least :data:`REST_BLOCK` bases and grows as the columns
        run out, to about :data:`REST_VALUES` values per block.  On many columns a block is
        screened first (:func:`_screened_feasibility`; its size then counts screening values)."""
        rest = self._cache[first:]
        _choose_screens(rest, self._responses, self._screens, columns, scale)
        rows = np.fromiter((entry.row for entry in rest), dtype=int, count=len(rest))
        found = np.full(columns.shape[1], -1)
        todo = np.arange(columns.shape[1])
        begin = 0
        while todo.size and begin < len(rows):
            screened = todo.size >= SCREEN_MIN_SAMPLES
            end = begin + max(REST_BLOCK, REST_VALUES // ((SCREEN_ROWS if screened else self.W.shape[0]) * todo.size))
            responses = self._responses.data[rows[begin:end]]
            if screened:
                feasible = _screened_feasibility(responses, self._screens.data[rows[begin:end]], columns[:, todo], scale[todo])
            else:
                feasible = _feasibility(responses, columns[:, todo], scale[todo])
            hit = feasible.any(axis=0)
            found[todo[hit]] = first + begin + feasible.argmax(axis=0)[hit]
            todo, begin = todo[~hit], end
        return found

    def _explore(self, sample: np.ndarray, allowed: np.ndarray, scale: float, rng: np.random.Generator) -> int | np.ndarray:
        """Lemke on the sample itself and on a sparsified copy (a probe: randomized Lemke alone, dropped
        if that fails, as in :class:`LemkeSolver`); returns a feasible one of the two at random.

        A cache index, or the sample's own ``z`` when its solution has no basis inverse.
        """
        own = self._lemke_index(sample, rng)
        found: list[int | np.ndarray] = [own.z if isinstance(own, LCPSolution) else own]
        alternative = sparsified(sample, allowed, rng)
        index = None if alternative is None else _probe(self.stats, lambda: self._lemke_index(alternative, rng, complete=False))
        if isinstance(index, int) and np.all(self._response(self._cache[index]) @ sample >= -scale):
            found.append(index)
        return found[rng.integers(len(found))]

    def _lemke_index(self, u: np.ndarray, rng: np.random.Generator, complete: bool = True) -> int | LCPSolution:
        """Run randomized Lemke on ``w = R u``; return the cache index of its final basis (added if new).

        A fallback solution without a basis inverse cannot be cached: it is returned itself.
        ``complete=False``: randomized Lemke alone (an exploration probe; :class:`LemkeError` if it fails).
        """
        assert self.rhs_map is not None  # set in __post_init__
        solution = _counted_lemke(self, u, rng, complete=complete)
        if solution.basis_inverse is None:
            return solution
        key = solution.basis.tobytes()
        if key not in self._position:
            self._position[key] = len(self._cache)
            self._bases.append(_CachedBasis(solution.basis, self._responses.count))
            self._cache.append(self._bases[-1])
            self._hits.append(0)
            self._responses.append(solution.basis_inverse @ self.rhs_map)
            self._screens.append(np.zeros((SCREEN_ROWS, self.rhs_map.shape[1])))
        return self._position[key]

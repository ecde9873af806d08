"""Stress test of the step-LCP solve (issue 10): many LCPs per hard family, a table of outcomes.

For every family of ``tests/hard_lcps.py`` (the slow tier's bulk family, mu to 1e5, mass
ratios to 1e8, near-parallel normals, 1e-9 velocities beside O(1), 16..128 contacts, all
combined) it solves ``--count`` step LCPs (eq. 75) with
:func:`bullet_setimpact.lcp_solve.solve_lcp` as the Routh law does (random covering vectors drawn
from the seed, bounds from :func:`~bullet_setimpact.laws.routh.step_lcp_bounds`) and prints:

- ``fallbacks``: solves where randomized Lemke failed (its raises, caught) and a later stage
  answered, by stage;
- the mean time of a fast-path solve and of a fallback solve;
- the worst residual of any returned solution (recomputed) and the final raises (must be 0).

Each chunk of :data:`CHUNK` seeds is written to ``--out`` as soon as it is solved
(``<family>_<first seed>.json``, atomically, with the commit of the code that solved it), and a
rerun with the same ``--out`` skips the chunks already there: a run of 10^5 LCPs that is stopped
loses at most the chunks in flight, and the table always covers every stored seed below
``--count``. The runs quoted in the issue notes are kept in ``benchmarks/results/lcp_stress/``
(committed as they grow, since a 10^5 run of the combined family outlasts a working session);
``--out benchmarks/results/lcp_stress`` reprints their table without solving anything.

Usage::

    python benchmarks/lcp_stress.py --count 2000 [--families mu,tiny] [--workers 2] [--out DIR]

The generators live with the tests (``tests/hard_lcps.py``, shared with the slow tier so
that both draw the same families); this script puts the repository root on ``sys.path`` to
import them, and otherwise uses only public names of the package.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: tests/hard_lcps.py

from bullet_setimpact.lcp import lcp_residual
from bullet_setimpact.lcp_solve import solve_lcp
from bullet_setimpact.pool import execute
from bullet_setimpact.records import atomic_write_text
from tests.hard_lcps import FAMILIES, step_lcp

#: Seeds per stored chunk (fixed, so that a rerun with another ``--workers`` resumes the same chunks).
CHUNK = 100
#: The two families of up to 128 contacts (about 0.1 and 0.5 s per LCP) may have their own count.
LARGE_FAMILIES = ("many", "combined")


def code_version() -> str:
    """The commit of this checkout (``+dirty`` with uncommitted changes), or ``"unknown"`` outside git."""
    root = Path(__file__).resolve().parents[1]
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "bullet_setimpact"], capture_output=True, text=True)
    except OSError:
        return "unknown"
    if commit.returncode != 0:
        return "unknown"
    return commit.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def run_chunk(job: tuple[str, int, int]) -> tuple[str, int, list[tuple[str, float, float]]]:
    """``(family, start, runs)`` with one ``(stage or error, seconds, residual)`` per seed ``start..stop``."""
    family, start, stop = job
    runs = []
    for seed in range(start, stop):
        W, w, bounds = step_lcp(family, seed)
        begin = time.perf_counter()
        try:
            solution = solve_lcp(W, w, rng=np.random.default_rng(seed), bounds=bounds)
        except Exception as exc:  # counted as a final raise
            runs.append((f"raised {type(exc).__name__}: {exc}", round(time.perf_counter() - begin, 4), float("inf")))
            continue
        residual = float(f"{lcp_residual(W, w, solution.z):.3g}")  # three digits: the table prints two
        runs.append((solution.method, round(time.perf_counter() - begin, 4), residual))
    return family, start, runs


def chunk_path(out: Path, family: str, start: int) -> Path:
    return out / f"{family}_{start:07d}.json"


def solve_family(family: str, count: int, out: Path, workers: int) -> list[tuple[str, float, float]]:
    """Every run of ``family`` for seeds below ``count``: the stored chunks, and the others solved and stored."""
    jobs = [(family, start, min(start + CHUNK, count)) for start in range(0, count, CHUNK)]
    runs: list[tuple[str, float, float]] = []
    todo = []
    for job in jobs:
        path = chunk_path(out, family, job[1])
        stored = json.loads(path.read_text()) if path.exists() else None
        if stored is not None and stored["stop"] == job[2]:
            runs += [tuple(run) for run in stored["runs"]]
        else:
            todo.append(job)
    done = count - sum(stop - start for _, start, stop in todo)
    code = code_version() if todo else ""
    with (
        tqdm(total=count, initial=done, desc=family, unit="LCP", leave=False) as bar,
        contextlib.closing(execute(run_chunk, todo, None, workers)) as chunks,
    ):
        for _, start, chunk in chunks:
            atomic_write_text(chunk_path(out, family, start), json.dumps({"stop": start + len(chunk), "code": code, "runs": chunk}))
            runs += chunk
            bar.update(len(chunk))
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=2000, help="LCPs per family (default 2000)")
    parser.add_argument("--families", default=",".join(FAMILIES), help=f"comma-separated subset of {FAMILIES}")
    parser.add_argument("--many-count", type=int, default=None, help="LCPs for 'many' and 'combined' (default: --count)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument(
        "--out", type=Path, default=Path("lcp_stress_results"), help="results directory, resumed (default: lcp_stress_results)"
    )
    args = parser.parse_args()
    families = args.families.split(",")
    unknown = sorted(set(families) - set(FAMILIES))
    if unknown:
        parser.error(f"unknown families {unknown}; expected a subset of {FAMILIES}")
    args.out.mkdir(parents=True, exist_ok=True)
    header = f"{'family':<9} {'LCPs':>6} {'fallbacks':>9} {'share':>8} {'by stage':<46} {'fast ms':>8} {'fallback ms':>11}"
    print(f"{header} {'worst res':>9} {'raises':>6}")
    for family in families:
        count = args.many_count if family in LARGE_FAMILIES and args.many_count is not None else args.count
        runs = solve_family(family, count, args.out, args.workers)
        stages = Counter(run[0] for run in runs)
        fast = [run[1] for run in runs if run[0] == "lemke"]
        slow = [run[1] for run in runs if run[0] != "lemke" and not run[0].startswith("raised")]
        raised = [run[0] for run in runs if run[0].startswith("raised")]
        fallback_stages = {key: value for key, value in stages.items() if key != "lemke" and not key.startswith("raised")}
        worst = max((run[2] for run in runs if np.isfinite(run[2])), default=0.0)
        print(
            f"{family:<9} {len(runs):>6} {sum(fallback_stages.values()):>9} {sum(fallback_stages.values()) / len(runs):>8.2%} "
            f"{fallback_stages!s:<46} {1e3 * np.mean(fast) if fast else 0.0:>8.2f} "
            f"{1e3 * np.mean(slow) if slow else 0.0:>11.1f} {worst:>9.1e} {len(raised):>6}",
            flush=True,
        )
        for message in dict.fromkeys(raised):
            print(f"  {message}")


if __name__ == "__main__":
    main()

"""Stress test of the step-LCP solve: many LCPs per hard family, a table of outcomes.

For every family of ``tests/hard_lcps.py`` (the slow tier's bulk family, mu to 1e5, mass
ratios to 1e8, near-parallel normals, 1e-9 velocities beside O(1), 16..128 contacts, all
combined) it solves ``--count`` step LCPs (eq. 75) with
:func:`bullet_setimpact.core.lcp_solve.solve_lcp` as the Routh law does (random covering vectors drawn
from the seed, bounds from :func:`~bullet_setimpact.laws.routh.step_lcp_bounds`) and prints:

- ``fallbacks``: solves where randomized Lemke failed (its raises, caught) and a later stage
  answered, by stage;
- the mean time of a fast-path solve and of a fallback solve;
- the worst residual of any returned solution (recomputed) and the final raises (must be 0);
- the commits of the code that solved the stored chunks.

Each chunk of seeds (:data:`LARGE_CHUNK`, :data:`SMALL_CHUNK`) is written to ``--out`` as soon as
it is solved (``<family>_<first seed>.json``, atomically: the count and time of each stage, the
worst residual, the seeds that fell back or raised, and the commit of the code that solved it), and a
rerun with the same ``--out`` skips the chunks already there: a run of 10^5 LCPs that is stopped
loses at most the chunks in flight, and the table always covers every stored seed below
``--count``.  The output directory is local output and is not kept in git
(``benchmarks/results/`` is ignored).  Rerun with the same ``--out`` to print the table of
what is stored, solving only the seeds below ``--count`` that are not stored yet.  The table
of a 10^5-per-family run, with its columns explained, is in ``docs/performance.md``.

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
import math
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: tests/hard_lcps.py

from bullet_setimpact.core.lcp import lcp_residual
from bullet_setimpact.core.lcp_solve import solve_lcp
from bullet_setimpact.montecarlo.pool import execute
from bullet_setimpact.montecarlo.records import atomic_write_text
from tests.hard_lcps import FAMILIES, step_lcp

#: Seeds per stored chunk (fixed, so that a rerun with another ``--workers`` resumes the same
#: chunks): 100 for the two families of up to 128 contacts (about 0.07 and 0.35 s per LCP), 1000
#: for the others (about 1 ms).
LARGE_CHUNK, SMALL_CHUNK = 100, 1000
LARGE_FAMILIES = ("many", "combined")
#: The stage name of randomized Lemke (the fast path); every other stage is a fallback.
FAST = "lemke"


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


def run_chunk(job: tuple[str, int, int, str]) -> tuple[str, int, dict[str, Any]]:
    """``(family, start, summary)`` of the seeds ``start..stop`` (:func:`summarize`), solved by the code of commit ``code``."""
    family, start, stop, code = job
    runs = []
    for seed in range(start, stop):
        W, w, bounds = step_lcp(family, seed)
        begin = time.perf_counter()
        try:
            solution = solve_lcp(W, w, rng=np.random.default_rng(seed), bounds=bounds)
        except Exception as exc:  # counted as a final raise
            runs.append((seed, f"raised {type(exc).__name__}: {exc}", time.perf_counter() - begin, math.inf))
            continue
        runs.append((seed, solution.method, time.perf_counter() - begin, lcp_residual(W, w, solution.z)))
    return family, start, summarize(stop, code, runs)


def summarize(stop: int, code: str, runs: list[tuple[int, str, float, float]]) -> dict[str, Any]:
    """What a chunk stores of its ``(seed, stage or error, seconds, residual)`` runs: the count
    and total seconds of each stage, the worst residual, and every seed randomized Lemke did
    not answer (``[seed, stage, seconds]``) or that raised (``[seed, message]``)."""
    counts: Counter[str] = Counter()
    seconds: Counter[str] = Counter()
    fallbacks, raises = [], []
    for seed, stage, elapsed, _ in runs:
        if stage.startswith("raised"):
            raises.append([seed, stage])
            continue
        counts[stage] += 1
        seconds[stage] += elapsed
        if stage != FAST:
            fallbacks.append([seed, stage, round(elapsed, 4)])
    worst = max((residual for *_, residual in runs if math.isfinite(residual)), default=0.0)
    return {
        "stop": stop,
        "code": code,
        "counts": dict(counts),
        "seconds": {stage: round(total, 4) for stage, total in seconds.items()},
        "worst_residual": float(f"{worst:.3g}"),
        "fallbacks": fallbacks,
        "raises": raises,
    }


def chunk_path(out: Path, family: str, start: int) -> Path:
    return out / f"{family}_{start:07d}.json"


def solve_family(family: str, count: int, out: Path, workers: int) -> list[dict[str, Any]]:
    """The summaries of ``family``'s seeds below ``count``: the stored chunks, and the others solved and stored."""
    size = LARGE_CHUNK if family in LARGE_FAMILIES else SMALL_CHUNK
    code = code_version()  # the workers run the code this process imported
    jobs = [(family, start, min(start + size, count), code) for start in range(0, count, size)]
    summaries = []
    todo = []
    for job in jobs:
        path = chunk_path(out, family, job[1])
        stored = json.loads(path.read_text()) if path.exists() else None
        if stored is not None and stored["stop"] == job[2]:
            summaries.append(stored)
        elif stored is not None and stored["stop"] > job[2]:  # solving the shorter chunk would overwrite it
            raise SystemExit(
                f"{path} holds seeds {job[1]}..{stored['stop'] - 1}, more than --count {count} asks for; "
                f"give a --count that ends on a chunk boundary ({size} seeds) or another --out"
            )
        else:
            todo.append(job)
    done = count - sum(stop - start for _, start, stop, _ in todo)
    with (
        tqdm(total=count, initial=done, desc=family, unit="LCP", leave=False) as bar,
        contextlib.closing(execute(run_chunk, todo, None, workers)) as chunks,
    ):
        for _, start, summary in chunks:
            atomic_write_text(chunk_path(out, family, start), json.dumps(summary))
            summaries.append(summary)
            bar.update(sum(summary["counts"].values()) + len(summary["raises"]))
    return summaries


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
    print(f"{header} {'worst res':>9} {'raises':>6}  code")
    for family in families:
        count = args.many_count if family in LARGE_FAMILIES and args.many_count is not None else args.count
        summaries = solve_family(family, count, args.out, args.workers)
        counts: Counter[str] = sum((Counter(summary["counts"]) for summary in summaries), Counter())
        seconds: Counter[str] = sum((Counter(summary["seconds"]) for summary in summaries), Counter())
        raises = [message for summary in summaries for _, message in summary["raises"]]
        fallback_stages = {stage: number for stage, number in counts.items() if stage != FAST}
        fallbacks = sum(fallback_stages.values())
        solved = sum(counts.values()) + len(raises)
        fast_ms = 1e3 * seconds[FAST] / counts[FAST] if counts[FAST] else 0.0
        fallback_ms = 1e3 * sum(seconds[stage] for stage in fallback_stages) / fallbacks if fallbacks else 0.0
        worst = max((summary["worst_residual"] for summary in summaries), default=0.0)
        codes = sorted({summary["code"] for summary in summaries})
        print(
            f"{family:<9} {solved:>6} {fallbacks:>9} {fallbacks / solved:>8.2%} {fallback_stages!s:<46} "
            f"{fast_ms:>8.2f} {fallback_ms:>11.1f} {worst:>9.1e} {len(raises):>6}  {','.join(codes)}",
            flush=True,
        )
        for message in dict.fromkeys(raises):
            print(f"  {message}")


if __name__ == "__main__":
    main()

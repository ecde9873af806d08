"""Soak run: 1000 quadruped landings on 2 workers, one worker killed every 100 rollouts.

The run must finish with all rollouts, identical to an undisturbed run with the same seed.
Prints the times of both runs and the number of workers killed.

    python benchmarks/soak.py [--rollouts 1000] [--every 100]
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bullet_setimpact.montecarlo.rollouts import monte_carlo
from bullet_setimpact.montecarlo.storage import RolloutStore

SCENARIO = "quadruped_landing"


def _launch(out: Path, rollouts: int) -> subprocess.Popen:
    code = (
        "from bullet_setimpact.montecarlo.rollouts import monte_carlo\n"
        f"monte_carlo({SCENARIO!r}, {rollouts}, seed=7, workers=2, out={str(out)!r})\n"
    )
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _workers(pid: int) -> list[int]:
    children = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        children += [int(child) for child in (task / "children").read_text().split()]
    return [child for child in children if b"resource_tracker" not in Path(f"/proc/{child}/cmdline").read_bytes()]


def soak(out: Path, rollouts: int, every: int) -> tuple[float, int]:
    """Run with a worker killed every ``every`` finished rollouts; returns (seconds, kills)."""
    start, kills, next_kill = time.perf_counter(), 0, every
    process = _launch(out, rollouts)
    while process.poll() is None:
        done = len(list(out.glob("rollout_*.npz")))
        if done >= next_kill:
            workers = _workers(process.pid)
            if workers:
                os.kill(random.Random(done).choice(workers), signal.SIGKILL)
                kills += 1
            next_kill += every
        time.sleep(0.2)
    if process.returncode != 0:
        raise RuntimeError(f"the soak run failed with exit code {process.returncode}")
    return time.perf_counter() - start, kills


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rollouts", type=int, default=1000)
    parser.add_argument("--every", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        disturbed = Path(scratch) / "disturbed"
        seconds, kills = soak(disturbed, args.rollouts, args.every)
        start = time.perf_counter()
        reference = monte_carlo(SCENARIO, args.rollouts, seed=7, workers=2, progress=False)
        undisturbed = time.perf_counter() - start
        store = RolloutStore(disturbed, reference.config, resume=True)
        identical = True
        for record in reference.records:
            stored = store.load(record.index)
            same = stored is not None and len(stored.events) == len(record.events)
            same = same and all(np.array_equal(a.v_plus, b.v_plus) for a, b in zip(stored.events, record.events, strict=True))
            same = same and all(np.array_equal(stored.final[key], record.final[key]) for key in record.final)
            identical &= bool(same)
    print(f"soak: {args.rollouts} rollouts of {SCENARIO} on 2 workers, {kills} workers killed: {seconds:.1f} s")
    print(f"undisturbed run: {undisturbed:.1f} s; all {args.rollouts} results identical: {identical}")


if __name__ == "__main__":
    main()

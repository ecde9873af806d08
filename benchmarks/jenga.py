"""Jenga stack: 3 crossed layers of ``pybullet_data/jenga/jenga.urdf``
dropped 0.1 m onto the box ground, 2 s at 240 Hz, ``on_failure="raise"``.

Prints, per law and seed: events, the largest event's contact count, the wall time of the
step that resolved it, the slowest event step's wall time, and the whole run's wall time
(target: <= 1 s for the largest event).

    python benchmarks/jenga.py                  # Routh seeds 0-2 and Anitescu-Potra
    python benchmarks/jenga.py --seconds 0.5 --laws anitescu-potra
    python benchmarks/jenga.py --friction-directions 4   # a coarser friction cone: smaller LCPs
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pybullet as p

from bullet_setimpact.bullet.simulator import ImpactSimulator
from bullet_setimpact.laws import get_law

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: tests/drop_worlds.py

from tests.drop_worlds import DROP_WORLDS, load_drop_world

TIME_STEP = 1.0 / 240.0


def run(law: str, seed: int, seconds: float, friction_directions: int | None = None) -> tuple[int, int, float, float, float, float]:
    """``(events, largest event's contacts, its step's wall time, its time, slowest event step's wall time, whole wall time)``."""
    client = p.connect(p.DIRECT)
    p.setGravity(0, 0, -9.81, physicsClientId=client)
    p.setPhysicsEngineParameter(fixedTimeStep=TIME_STEP, physicsClientId=client)
    jenga = next(world for world in DROP_WORLDS if world.name == "jenga")
    load_drop_world(client, jenga, "box", height=0.1)
    simulator = ImpactSimulator(get_law(law), client, seed=seed, on_failure="raise", friction_directions=friction_directions)
    largest = (0, 0.0, 0.0)
    slowest = 0.0
    begin = time.perf_counter()
    try:
        for _ in range(round(seconds / TIME_STEP)):
            start = time.perf_counter()
            events = simulator.step()
            elapsed = time.perf_counter() - start
            slowest = max(slowest, elapsed) if events else slowest
            for event in events:
                if len(event.contacts) > largest[0]:
                    largest = (len(event.contacts), elapsed, event.time)
    finally:
        p.disconnect(client)
    return len(simulator.events), largest[0], largest[1], largest[2], slowest, time.perf_counter() - begin


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="simulated seconds (default 2)")
    parser.add_argument("--laws", default="routh,anitescu-potra", help="comma-separated laws (default routh,anitescu-potra)")
    parser.add_argument(
        "--friction-directions", type=int, default=None, help="linearized friction directions per contact (default: the simulator's, 8)"
    )
    args = parser.parse_args()
    print(
        f"{'law':<15} {'seed':>4} {'events':>6} {'contacts':>8} {'event step [s]':>14} {'at t [s]':>8} {'slowest [s]':>11} {'run [s]':>8}"
    )
    for law in args.laws.split(","):
        for seed in (0, 1, 2) if law == "routh" else (0,):
            events, contacts, step, at, slowest, whole = run(law, seed, args.seconds, args.friction_directions)
            print(f"{law:<15} {seed:4d} {events:6d} {contacts:8d} {step:14.3f} {at:8.3f} {slowest:11.3f} {whole:8.1f}", flush=True)


if __name__ == "__main__":
    main()

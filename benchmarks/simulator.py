"""ImpactSimulator overheads, measured in one run.

1. Free flight: ``sim.step()`` against ``p.stepSimulation()`` on the humanoid falling
   through the air (no contact), median per step and the ratio (target <= 1.3x).
2. Per impact event (localization, contact set, extraction and resolve together): the
   median wall time of the steps that contain an event, on the planar rocking block dropped
   from 1 cm (target <= 5 ms) and on the a1 quadruped (12 DoF) landing on four feet
   (target <= 30 ms).

    python benchmarks/simulator.py
"""

from __future__ import annotations

import statistics
import time

import numpy as np
import pybullet as p
import pybullet_data

from bullet_setimpact import RouthImpact
from bullet_setimpact.bullet.examples import load_planar_example, load_static
from bullet_setimpact.bullet.inventory import movable_joints
from bullet_setimpact.bullet.simulator import ImpactSimulator
from bullet_setimpact.hooks import ORIGINAL_STEP


def _world() -> int:
    client = p.connect(p.DIRECT)
    p.setGravity(0, 0, -9.81, physicsClientId=client)
    p.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=client)
    return client


def free_flight(steps: int = 3000) -> tuple[float, float]:
    """Median microseconds per step of p.stepSimulation and of sim.step, humanoid in the air.

    The two worlds live in two clients and their steps alternate, so both medians see the
    same machine load."""
    clients, steppers = [], []
    for mode in ("bullet", "simulator"):
        client = _world()
        load_static(client)
        p.loadURDF("humanoid/humanoid.urdf", [0, 0, 10000], physicsClientId=client)
        p.setGravity(0, 0, 0, physicsClientId=client)
        if mode == "simulator":
            steppers.append(ImpactSimulator(RouthImpact("auto", 50), client, seed=0).step)
        else:
            steppers.append(lambda c=client: ORIGINAL_STEP(physicsClientId=c))
        clients.append(client)
    samples: list[list[float]] = [[], []]
    for _ in range(steps):
        for which, step in enumerate(steppers):
            start = time.perf_counter()
            step()
            samples[which].append(time.perf_counter() - start)
    for client in clients:
        p.disconnect(client)
    return 1e6 * statistics.median(samples[0]), 1e6 * statistics.median(samples[1])


def event_steps(build, drops: int, steps: int) -> list[float]:  # type: ignore[no-untyped-def]  # a world-building callable
    """Wall times [ms] of the steps that contained impact events, over ``drops`` seeds."""
    times = []
    for seed in range(drops):
        client = _world()
        build(client)
        sim = ImpactSimulator(RouthImpact("auto", 50), client, seed=seed)
        for _ in range(steps):
            start = time.perf_counter()
            events = sim.step()
            if events:
                times.append(1e3 * (time.perf_counter() - start) / len(events))
        p.disconnect(client)
    return times


def rocking_block(client: int) -> None:
    load_planar_example(client, "rocking_block", configuration=np.array([0.0, 1.01, 0.0]), velocity=np.zeros(3))


def quadruped(client: int) -> None:
    load_static(client)
    robot = p.loadURDF("a1/a1.urdf", [0, 0, 0.45], physicsClientId=client)
    joints = list(movable_joints(client, robot))
    p.setJointMotorControlArray(
        robot, joints, p.POSITION_CONTROL, targetPositions=[0.0, 0.9, -1.8] * 4, forces=[30.0] * len(joints), physicsClientId=client
    )
    for joint, angle in zip(joints, [0.0, 0.9, -1.8] * 4, strict=True):
        p.resetJointState(robot, joint, angle, physicsClientId=client)


def main() -> None:
    try:
        bullet, simulator = free_flight()
        print(
            f"free flight, humanoid: p.stepSimulation {bullet:.1f} us, sim.step {simulator:.1f} us, "
            f"ratio {simulator / bullet:.2f} (target <= 1.3)"
        )
    except ValueError as exc:
        print(f"free flight, humanoid: not measurable ({exc})")
    block = event_steps(rocking_block, drops=40, steps=60)
    print(f"impact event, planar rocking block: median {statistics.median(block):.2f} ms over {len(block)} events (target <= 5 ms)")
    legs = event_steps(quadruped, drops=10, steps=80)
    print(f"impact event, a1 quadruped landing: median {statistics.median(legs):.2f} ms over {len(legs)} events (target <= 30 ms)")


if __name__ == "__main__":
    main()

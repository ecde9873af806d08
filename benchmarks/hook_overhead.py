"""What the hook costs per Bullet step, hooked (``ImpactSimulator.step``) against plain
``p.stepSimulation``, measured in one run (issue 11's table).

Each world is built twice, in two clients, and the two are stepped alternately for the same
number of steps (a drop of ``--seconds`` at 240 Hz), so both see the same machine load.  A
step is classified by what happened in it:

- ``free``: no contact point after the step;
- ``rest``: contact points, no impact event (resting or sliding contact);
- ``event``: the hooked step resolved at least one impact (plain Bullet has no such class;
  its ratio is against plain's median contact step).

Printed per world: the medians [us] of each class, hooked / plain ratios, and the ratio of
the whole loop's wall time.  Targets (issue 11): resting <= 1.5x for the quadrupeds,
humanoid and arms, <= 3x for single cheap bodies; a whole 2 s drop <= 2x for the quadrupeds
and humanoid.

    python benchmarks/hook_overhead.py               # every world, 3 seeds (drop heights)
    python benchmarks/hook_overhead.py --worlds a1 cube --seeds 1
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import pybullet as p
import pybullet_data

from bullet_setimpact import ImpactSimulator, RouthImpact, data_path

TIME_STEP = 1.0 / 240.0


@dataclass(frozen=True)
class World:
    """A body (``urdf`` inside ``pybullet_data``) dropped onto a ground."""

    name: str
    urdf: str
    ground: str = "box"  # "box" (the shipped ground_box.urdf), "plane" (GEOM_PLANE) or "table"
    fixed_base: bool = False
    free_joints: bool = False  # switch off PyBullet's default joint motors (arms collapse onto the table)
    tilt: float = 0.0  # initial angle of every movable joint [rad] (an upright arm would balance)


WORLDS = [
    World("a1", "a1/a1.urdf"),
    World("aliengo", "aliengo/aliengo.urdf"),
    World("mini_cheetah", "mini_cheetah/mini_cheetah.urdf"),
    World("minitaur", "quadruped/minitaur.urdf"),
    World("laikago", "laikago/laikago_toes.urdf"),
    World("humanoid", "humanoid/humanoid.urdf"),
    World("r2d2", "r2d2.urdf"),
    World("racecar", "racecar/racecar.urdf"),
    World("husky", "husky/husky.urdf"),
    World("kuka", "kuka_iiwa/model.urdf", ground="table", fixed_base=True, free_joints=True, tilt=0.4),
    World("panda", "franka_panda/panda.urdf", ground="table", fixed_base=True, free_joints=True, tilt=0.4),
    World("cube", "cube_small.urdf"),
    World("sphere", "sphere_small.urdf"),
    World("duck", "duck_vhacd.urdf"),
    World("lego", "lego/lego.urdf"),
    World("cube_plane", "cube_small.urdf", ground="plane"),
    World("sphere_plane", "sphere_small.urdf", ground="plane"),
]


def build(world: World, height: float) -> int:
    """A new client holding ``world``, its body's lowest point ``height`` above the ground."""
    client = p.connect(p.DIRECT)
    p.setAdditionalSearchPath(pybullet_data.getDataPath(), physicsClientId=client)
    p.setGravity(0, 0, -9.81, physicsClientId=client)
    p.setPhysicsEngineParameter(fixedTimeStep=TIME_STEP, physicsClientId=client)
    if world.ground == "plane":
        p.loadURDF("plane.urdf", physicsClientId=client)
        top = 0.0
    elif world.ground == "table":
        table = p.loadURDF("table/table.urdf", useFixedBase=True, physicsClientId=client)
        top = p.getAABB(table, -1, physicsClientId=client)[1][2]
    else:
        p.loadURDF(os.path.join(data_path(), "ground_box.urdf"), useFixedBase=True, physicsClientId=client)
        top = 0.0
    body = p.loadURDF(world.urdf, [0, 0, 5.0], useFixedBase=world.fixed_base, physicsClientId=client)
    lowest = min(p.getAABB(body, link, physicsClientId=client)[0][2] for link in range(-1, p.getNumJoints(body, physicsClientId=client)))
    position, orientation = p.getBasePositionAndOrientation(body, physicsClientId=client)
    base = [position[0], position[1], position[2] - lowest + top + height]
    if world.fixed_base:  # a fixed base cannot be moved by reset: reload it where it belongs
        p.removeBody(body, physicsClientId=client)
        body = p.loadURDF(world.urdf, base, orientation, useFixedBase=True, physicsClientId=client)
    else:
        p.resetBasePositionAndOrientation(body, base, orientation, physicsClientId=client)
    for joint in range(p.getNumJoints(body, physicsClientId=client)):
        if world.free_joints:
            p.setJointMotorControl2(body, joint, p.VELOCITY_CONTROL, force=0.0, physicsClientId=client)
        if world.tilt and p.getJointInfo(body, joint, physicsClientId=client)[2] == p.JOINT_REVOLUTE:
            p.resetJointState(body, joint, world.tilt, physicsClientId=client)
    return client


def measure(world: World, height: float, seed: int, steps: int) -> dict[str, list[float]]:
    """Per-step wall times [us] of both loops, classified (keys ``plain:free``, ``hooked:event``, ...)."""
    plain, hooked = build(world, height), build(world, height)
    simulator = ImpactSimulator(RouthImpact("auto", 50), client=hooked, seed=seed, on_failure="fallback")
    times: dict[str, list[float]] = {}
    totals = {"plain": 0.0, "hooked": 0.0}
    loops: list[tuple[str, int, Callable[[], object]]] = [
        ("plain", plain, lambda: p.stepSimulation(physicsClientId=plain)),
        ("hooked", hooked, simulator.step),
    ]
    for _ in range(steps):
        for name, client, step in loops:
            start = time.perf_counter()
            events = step()
            elapsed = time.perf_counter() - start
            totals[name] += elapsed
            kind = "event" if name == "hooked" and events else ("rest" if p.getContactPoints(physicsClientId=client) else "free")
            times.setdefault(f"{name}:{kind}", []).append(1e6 * elapsed)
    for client in (plain, hooked):
        p.disconnect(client)
    times["plain:total"], times["hooked:total"] = [totals["plain"]], [totals["hooked"]]
    return times


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worlds", nargs="*", default=[world.name for world in WORLDS], help="worlds to measure (default: all)")
    parser.add_argument("--seeds", type=int, default=3, help="drops per world, from 2, 5, 10 cm ... (default 3)")
    parser.add_argument("--seconds", type=float, default=2.0, help="simulated seconds per drop (default 2)")
    args = parser.parse_args()
    chosen = [world for world in WORLDS if world.name in args.worlds]
    steps = round(args.seconds / TIME_STEP)
    heights = [0.02, 0.05, 0.10, 0.15, 0.20][: args.seeds]
    print(f"per-step medians [us] over {len(heights)} drops of {args.seconds:g} s (heights {heights} m), hooked / plain ratios")
    print(f"{'world':<13} {'free':>17} {'rest':>19} {'event':>17} {'whole drop':>11} {'events':>7}")
    for world in chosen:
        runs = [measure(world, height, seed, steps) for seed, height in enumerate(heights)]
        merged: dict[str, list[float]] = {}
        for run in runs:
            for key, values in run.items():
                merged.setdefault(key, []).extend(values)
        plain_contact = merged.get("plain:rest", []) or merged.get("plain:free", [])
        free = (_median(merged.get("hooked:free", [])), _median(merged.get("plain:free", [])))
        rest = (_median(merged.get("hooked:rest", [])), _median(merged.get("plain:rest", [])))
        event = (_median(merged.get("hooked:event", [])), _median(plain_contact))
        whole = statistics.median(run["hooked:total"][0] / run["plain:total"][0] for run in runs)
        print(
            f"{world.name:<13} {free[0]:6.0f}/{free[1]:4.0f} {free[0] / free[1]:5.2f}x "
            f"{rest[0]:6.0f}/{rest[1]:5.0f} {rest[0] / rest[1]:5.2f}x "
            f"{event[0]:6.0f}/{event[1]:4.0f} {event[0] / event[1]:5.1f}x {whole:10.2f}x {len(merged.get('hooked:event', [])):7d}"
        )


if __name__ == "__main__":
    main()

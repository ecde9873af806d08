"""What the hook costs while legged robots walk and an arm pushes: footfalls every few steps.

Three worlds, each built twice (plain Bullet and hooked) in one process and stepped in
alternate blocks of :data:`BLOCK` steps, so both see the same machine load:

- ``a1``: pybullet_data's a1 on ``plane.urdf`` (a box ground), trotting open loop under
  position control (diagonal legs in antiphase, ``tests.pattern_envs.a1_world``), ``--seconds`` at 240 Hz;
- ``minitaur``: pybullet_envs' Minitaur model (its ``Minitaur`` class: knee constraints,
  position-controlled motors), trotting open loop through its leg model;
- ``panda_push``: panda-gym's ``PandaPush-v3`` with random actions, per ``env.step`` (each one
  20 Bullet steps of 2 ms, 0.04 s), episodes reset as the environment asks, episode ``k`` with
  seed ``k``: panda-gym (3.0.7, its issue 94) draws the goal and the cube of a reset without a
  seed from fresh entropy, so the two copies, and two runs, would push different cubes.

The two copies get the same commands.  While a simulator lives, the package wraps some of
PyBullet's functions (its step, the ``reset*`` functions, the motor commands: see
:mod:`bullet_setimpact.bullet.following`); the plain copy calls PyBullet's own
(:func:`plain_client`), as it would in a process without the package.  Printed per world:

- ``ratio``: the hooked loop's total step time over plain's;
- ``events/s``: impact events per simulated second;
- ``event ms``: the wall time of the hooked steps with an event, median and p90;
- ``contacts``: contacts per event, median and largest;
- ``in events``: the share of the hooked time spent in steps with events;
- ``quiet``: the median hooked step without an event over plain's median step.

The trots time the step calls alone (the same commands go to both copies); ``panda_push``
times whole ``env.step`` calls, as a training loop sees them.

``--breakdown`` measures each world a second time with the package's PyBullet calls and its
LCP solves timed (:func:`timed_calls`), and prints, as ratios of plain's time in that run,
where the hooked time goes: Bullet's steps (trials and re-simulations), its other queries,
the LCP solves, and the rest, Python and NumPy (the first run's ratio less the other three).
Bullet's work and the solves are the floor of this design; the rest is what speed-ups can cut.

    python benchmarks/walking.py                     # every world
    python benchmarks/walking.py --worlds a1 --seconds 2
    python benchmarks/walking.py --worlds minitaur --breakdown
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import functools
import itertools
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pybullet
from pybullet_utils.bullet_client import BulletClient

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: tests/pattern_envs.py

import bullet_setimpact
from bullet_setimpact import ImpactSimulator, RouthImpact
from bullet_setimpact.bullet import following
from bullet_setimpact.core.lcp_solve import solve_lcp
from bullet_setimpact.hooks import ORIGINAL_STEP
from tests.pattern_envs import a1_world, minitaur_command, minitaur_world, trot

#: Steps each loop takes before the other takes its turn.
BLOCK = 24
DT = 1.0 / 240.0


def law() -> RouthImpact:
    return RouthImpact(step="auto", max_steps=50)


@dataclass
class Timings:
    """Per-step wall times [s] of the two loops and what the hooked steps resolved."""

    plain: list[float] = field(default_factory=list)
    hooked: list[float] = field(default_factory=list)
    event_steps: list[int] = field(default_factory=list)  # indices into hooked
    contacts: list[int] = field(default_factory=list)  # per event
    simulated: float = 0.0
    events: int = 0


def run_in_blocks(plain_step: Callable[[int], object], hooked_step: Callable[[int], list], steps: int) -> Timings:
    """Step both loops ``steps`` times in alternate blocks; ``hooked_step`` returns its events."""
    timings = Timings()
    for first in range(0, steps, BLOCK):
        block = range(first, min(first + BLOCK, steps))
        for index in block:
            start = time.perf_counter()
            plain_step(index)
            timings.plain.append(time.perf_counter() - start)
        for index in block:
            start = time.perf_counter()
            events = hooked_step(index)
            timings.hooked.append(time.perf_counter() - start)
            if events:
                timings.event_steps.append(index)
                timings.events += len(events)
                timings.contacts += [len(event.contacts) for event in events]
    return timings


def plain_client(client: BulletClient) -> BulletClient:
    """``client``, calling PyBullet's own function for each name the package wraps while a
    simulator lives (:data:`~bullet_setimpact.bullet.following.WRAPPED`, but connections),
    bound to the client as instance attributes.  Those skip ``BulletClient.__getattr__``: a
    call costs some 0.5 us less than in a process without the package, so plain errs fast."""
    for name in (name for name in following.WRAPPED if name not in following.CONNECTIONS):
        setattr(client, name, functools.partial(following.ORIGINALS[name], physicsClientId=client._client))
    return client


def measure_a1(seconds: float) -> Timings:
    (plain, plain_joints, targets), (hooked, hooked_joints, _) = a1_world(DT), a1_world(DT)
    plain_client(plain)
    simulator = ImpactSimulator(law(), hooked, seed=0)
    commands = (trot(plain, plain_joints, targets, 33.5), trot(hooked, hooked_joints, targets, 33.5))
    steps = round(seconds / DT)

    def plain_step(index: int) -> None:
        commands[0](index * DT)
        plain.stepSimulation()

    def hooked_step(index: int) -> list:
        commands[1](index * DT)
        return simulator.step()

    timings = run_in_blocks(plain_step, hooked_step, steps)
    timings.simulated = seconds
    return timings


def measure_minitaur(seconds: float) -> Timings:
    (plain, plain_robot), (hooked, hooked_robot) = minitaur_world(DT), minitaur_world(DT)
    plain_client(plain)
    simulator = ImpactSimulator(law(), hooked, seed=0)
    steps = round(seconds / DT)

    def plain_step(index: int) -> None:
        minitaur_command(plain_robot, index * DT)
        plain.stepSimulation()

    def hooked_step(index: int) -> list:
        minitaur_command(hooked_robot, index * DT)
        return simulator.step()

    timings = run_in_blocks(plain_step, hooked_step, steps)
    timings.simulated = seconds
    return timings


def measure_panda_push(seconds: float) -> Timings:
    import gymnasium
    import panda_gym  # noqa: F401  (registers the Panda environments)

    plain, hooked = gymnasium.make("PandaPush-v3"), gymnasium.make("PandaPush-v3")
    for env in (plain, hooked):
        env.reset(seed=0)
    plain_client(plain.unwrapped.sim.physics_client)
    simulator = bullet_setimpact.install(law(), client=hooked.unwrapped.sim.physics_client, seed=0)
    rng = np.random.default_rng(0)
    steps = round(seconds / plain.unwrapped.sim.dt)  # an env.step is n_substeps Bullet steps of its own time step
    actions = rng.uniform(-1.0, 1.0, size=(steps, *plain.action_space.shape))

    def env_step(env: gymnasium.Env) -> Callable[[int], object]:
        episodes = itertools.count(1)

        def step(index: int) -> object:
            _, _, terminated, truncated, _ = env.step(actions[index])
            if terminated or truncated:  # an unseeded reset would draw its episode from fresh entropy
                env.reset(seed=next(episodes))
            return None

        return step

    hooked_env_step = env_step(hooked)

    def hooked_step(index: int) -> list:
        before = len(simulator.events)
        hooked_env_step(index)
        return simulator.events[before:]

    try:
        timings = run_in_blocks(env_step(plain), hooked_step, steps)
    finally:
        bullet_setimpact.uninstall(hooked.unwrapped.sim.physics_client)
        plain.close()
        hooked.close()
    timings.simulated = seconds
    return timings


WORLDS: dict[str, Callable[[float], Timings]] = {"a1": measure_a1, "minitaur": measure_minitaur, "panda_push": measure_panda_push}


class _TimedPyBullet:
    """Stands in for the ``pybullet`` module: every function call is timed into ``seconds``."""

    def __init__(self, seconds: collections.defaultdict[str, float]) -> None:
        self._seconds = seconds

    def __getattr__(self, name: str) -> object:
        found = getattr(pybullet, name)
        return _timed(found, name, self._seconds) if callable(found) else found


def _timed(function: Callable, name: str, seconds: collections.defaultdict[str, float]) -> Callable:
    @functools.wraps(function)
    def timed(*args: object, **kwargs: object) -> object:
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            seconds[name] += time.perf_counter() - start

    return timed


@contextlib.contextmanager
def timed_calls() -> Iterator[collections.defaultdict[str, float]]:
    """Time, while in the context, the package's PyBullet calls (by function name; Bullet's own
    steps as ``stepSimulation``) and its LCP solves (``solve_lcp``): the package's modules get
    timed stand-ins for ``pybullet``, Bullet's step and ``solve_lcp``, restored on leaving."""
    seconds: collections.defaultdict[str, float] = collections.defaultdict(float)
    stand_ins = {
        "p": (pybullet, _TimedPyBullet(seconds)),
        "bullet_step_simulation": (ORIGINAL_STEP, _timed(ORIGINAL_STEP, "stepSimulation", seconds)),
        "solve_lcp": (solve_lcp, _timed(solve_lcp, "solve_lcp", seconds)),
    }
    replaced = []
    for module in [module for name, module in list(sys.modules.items()) if name.startswith("bullet_setimpact.")]:
        for name, (original, stand_in) in stand_ins.items():
            if vars(module).get(name) is original:
                replaced.append((module, name))
                setattr(module, name, stand_in)
    try:
        yield seconds
    finally:
        for module, name in replaced:
            setattr(module, name, stand_ins[name][0])


def breakdown(name: str, seconds: float, ratio: float) -> str:
    """Where the hooked time of world ``name`` goes, as ratios of plain's (module docstring);
    ``ratio``: the hooked ÷ plain ratio of the untimed run."""
    with timed_calls() as inside:
        timings = WORLDS[name](seconds)
    plain = sum(timings.plain)
    steps = inside.pop("stepSimulation", 0.0) / plain
    solves = inside.pop("solve_lcp", 0.0) / plain
    queries = sum(inside.values()) / plain
    largest = ", ".join(f"{call} {spent / plain:.2f}x" for call, spent in sorted(inside.items(), key=lambda item: -item[1])[:3])
    return f"{name:12s} {steps:10.2f}x {queries:8.2f}x {solves:7.2f}x {ratio - steps - queries - solves:7.2f}x   ({largest})"


def report(name: str, timings: Timings) -> str:
    hooked = np.array(timings.hooked)
    plain = np.array(timings.plain)
    event_mask = np.zeros(len(hooked), dtype=bool)
    event_mask[timings.event_steps] = True
    event_ms = 1e3 * hooked[event_mask]
    quiet = hooked[~event_mask]
    median_event = f"{np.median(event_ms):6.2f} / {np.percentile(event_ms, 90):6.2f}" if len(event_ms) else "     - /      -"
    contacts = f"{statistics.median(timings.contacts):4.0f} / {max(timings.contacts):3d}" if timings.contacts else "   - /   -"
    return (
        f"{name:12s} {hooked.sum() / plain.sum():6.2f}x {timings.events / timings.simulated:8.1f} {median_event} "
        f"{contacts} {hooked[event_mask].sum() / hooked.sum():9.0%} {np.median(quiet) / np.median(plain):6.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worlds", nargs="*", default=list(WORLDS), choices=list(WORLDS), help="worlds to measure (default: all)")
    parser.add_argument("--seconds", type=float, default=5.0, help="simulated seconds per world (default 5)")
    parser.add_argument("--breakdown", action="store_true", help="measure again with Bullet's calls and the LCP solves timed")
    args = parser.parse_args()
    warnings.filterwarnings("ignore", category=bullet_setimpact.SetImpactWarning)
    print(f"{'world':12s} {'ratio':>7s} {'events/s':>8s} {'event ms med / p90':>15s} {'contacts':>9s} {'in events':>9s} {'quiet':>7s}")
    ratios = {}
    for name in args.worlds:
        timings = WORLDS[name](args.seconds)
        ratios[name] = sum(timings.hooked) / sum(timings.plain)
        print(report(name, timings), flush=True)
    if args.breakdown:
        print(
            f"\nhooked time ÷ plain's\n{'world':12s} {'Bullet steps':>11s} {'queries':>9s} {'solves':>8s} {'rest':>8s}   (largest queries)"
        )
        for name in args.worlds:
            print(breakdown(name, args.seconds, ratios[name]), flush=True)


if __name__ == "__main__":
    main()

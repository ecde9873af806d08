"""What the hook costs per Bullet step, hooked (``ImpactSimulator.step``) against plain
``p.stepSimulation``, measured in one run (the tables of docs/performance.md).

Each world is built twice, in two clients, and the two are stepped for the same number of
steps (a drop of ``--seconds`` at 240 Hz) in alternate blocks of :data:`BLOCK` steps, so both
see the same machine load and each loop runs as it would alone.  Alternating single steps
would flatter the ratios: the hook's Python work between two plain steps evicts Bullet's data
from the caches and slows plain Bullet's step too (docs/performance.md).  Each step is timed, and classified by what happened in it:

- ``free``: no contact point after the step;
- ``rest``: contact points, no impact event (resting or sliding contact);
- ``event``: the hooked step resolved at least one impact (plain Bullet has no such class;
  its ratio is against plain's median contact step).

A drop's ``rest`` class holds the steps after landing, while a humanoid still tumbles and
slides: new pairs keep arriving (slower than the impact threshold), so the contact set must
be evaluated again.  Resting contact proper is measured after the drop: both worlds step
``--settle`` seconds more untimed, then ``--settled`` seconds are timed (``settled``: steps
with contact and no event, such as an a1 standing after its landing).
Halfway through the untimed seconds the hooked world's state is copied into the plain one:
after an impact the two rest in different poses, on which Bullet's own step costs
different times (the laikago's differ by 1.3x), and the settled ratio is to measure the hook.

Printed per world: the medians [us] of each class, hooked / plain ratios, Bullet's own time
inside the hooked ``rest`` steps (median [us], and over plain's: the hook's work between two
steps evicts some of Bullet's data from the caches, and after an impact the hooked world rests
in another pose than the plain one, often on more contact points, and Bullet's step there costs
another time; the ``settled`` steps start from one state), the ratio of the whole drop's wall
time, and the share of the drop's hooked steps (and of the steps after it) the distance budget
let skip the contact evaluation.  ``floor``: the settled ratio a hooked step would have if it
made only the PyBullet calls it cannot do without (:func:`required_calls`) and no Python work
at all, against Bullet's bare step of the same world at the same time; ``least``: the same with
the checks the hook must make on their answers (the state compared, every link's speed bound,
Bullet's points scanned), through the package's own functions, and none of the distance
budget's bookkeeping: the least a resting step of this design can cost.  Then the wall time of
single event steps: the journal's rocking block arriving at its impact configuration with its
pre-impact velocity (in the third step after its release, not the simulator's first), and the
a1's four-foot landing.  Last, a cube sliding over each ground at 1 m/s (sliding contact, which
the resting-contact certificates cannot skip: see docs/performance.md).  Targets:
resting <= 1.5x for the quadrupeds, humanoid and arms, <= 3x for single cheap bodies; a whole
2 s drop <= 2x for the quadrupeds and humanoid; rocking-block event <= 2 ms, a1 landing event
<= 5 ms (medians).

    python benchmarks/hook_overhead.py               # every world, 3 seeds (drop heights)
    python benchmarks/hook_overhead.py --worlds a1 cube --seeds 1
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pybullet as p

from bullet_setimpact import ImpactSimulator, ManifoldCompletionWarning, RouthImpact, UnknownMotorWarning, UnstableDampingWarning, planar
from bullet_setimpact.bullet import simulator as simulator_module
from bullet_setimpact.bullet.events import contact_points, pushed_by_bullet
from bullet_setimpact.bullet.examples import load_planar_example
from bullet_setimpact.bullet.resting.budget import MotionBound
from bullet_setimpact.bullet.state import Snapshot
from bullet_setimpact.hooks import ORIGINAL_STEP

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: tests/drop_worlds.py

from tests.drop_worlds import DROP_WORLDS, DropWorld, bullet_output_discarded, load_drop_world

TIME_STEP = 1.0 / 240.0
#: Steps each loop takes in a row before the other loop takes as many (see the module docstring).
BLOCK = 24


#: (name, world, ground) of every measured world: the survey's bodies on the box ground, and
#: the cube and sphere on a true GEOM_PLANE.
WORLDS = [(world.name, world, "box") for world in DROP_WORLDS if world.name != "jenga"]
WORLDS += [(f"{name}_plane", world, "plane") for name, world, _ in WORLDS if name in ("cube", "sphere")]


def build(world: DropWorld, ground: str, height: float) -> int:
    """A new client holding ``world`` on ``ground``, its lowest point ``height`` above it."""
    client = p.connect(p.DIRECT)
    p.setGravity(0, 0, -9.81, physicsClientId=client)
    p.setPhysicsEngineParameter(fixedTimeStep=TIME_STEP, physicsClientId=client)
    with bullet_output_discarded():  # the humanoid's URDF warns of every joint without an axis, every load
        load_drop_world(client, world, ground, height)
    return client


@contextlib.contextmanager
def _bullet_timed(record: list[float]) -> Iterator[None]:
    """Append the wall time of each of Bullet's own steps the simulator takes to ``record``
    (through :data:`~bullet_setimpact.bullet.simulator.bullet_step_simulation`; the wrapper adds
    well under a microsecond per step)."""
    original = simulator_module.bullet_step_simulation

    def timed(*args: int, **kwargs: int) -> None:
        start = time.perf_counter()
        original(*args, **kwargs)
        record.append(time.perf_counter() - start)

    simulator_module.bullet_step_simulation = timed
    try:
        yield
    finally:
        simulator_module.bullet_step_simulation = original


def measure(world: DropWorld, ground: str, height: float, seed: int, steps: int, settle: int, settled: int) -> dict[str, list[float]]:
    """Per-step wall times [us] of both loops, classified (keys ``plain:free``, ``hooked:event``,
    ...) over the drop's ``steps``; then, after ``settle`` untimed steps, ``settled`` steps of the
    world at rest (keys ``plain:settled``, ``hooked:settled``: steps with contact, no event)."""
    plain, hooked = build(world, ground, height), build(world, ground, height)
    simulator = ImpactSimulator(RouthImpact("auto", 50), client=hooked, seed=seed, on_failure="fallback")
    times: dict[str, list[float]] = {}
    totals = {"plain": 0.0, "hooked": 0.0}
    loops: list[tuple[str, int, Callable[[], object]]] = [
        ("plain", plain, lambda: ORIGINAL_STEP(physicsClientId=plain)),
        ("hooked", hooked, simulator.step),
    ]
    inside: list[float] = []
    moving = {model.body: model.joints for model in simulator.world.bodies}
    total, copy_at = steps + settle + settled, steps + settle // 2
    for first in range(0, total, BLOCK):
        if first <= copy_at < first + BLOCK:  # one state for both (the docstring's "copied")
            dataclasses.replace(Snapshot.take(hooked, moving), client=plain).restore()
        for name, client, step in loops:
            for index in range(first, min(first + BLOCK, total)):
                inside.clear()
                with _bullet_timed(inside) if name == "hooked" else contextlib.nullcontext():
                    start = time.perf_counter()
                    events = step()
                    elapsed = time.perf_counter() - start
                kind = "event" if name == "hooked" and events else ("rest" if p.getContactPoints(physicsClientId=client) else "free")
                if index < steps:
                    totals[name] += elapsed
                    times.setdefault(f"{name}:{kind}", []).append(1e6 * elapsed)
                    if name == "hooked" and kind == "rest":
                        times.setdefault("hooked:rest:bullet", []).append(1e6 * sum(inside))
                elif index >= steps + settle and kind == "rest":
                    times.setdefault(f"{name}:settled", []).append(1e6 * elapsed)
                if name == "hooked" and index == steps - 1:
                    budget_steps = simulator.budget_steps
    lean = required_calls(hooked, simulator, moving)
    times["floor"], times["least"], times["floor:bare"] = lean["floor"], lean["least"], lean["bare"]
    for client in (plain, hooked):
        p.disconnect(client)
    times["plain:total"], times["hooked:total"] = [totals["plain"]], [totals["hooked"]]
    times["budget"] = [budget_steps / steps]
    times["budget:settled"] = [(simulator.budget_steps - budget_steps) / (settle + settled)]
    return times


#: The rocking block falls this long before its impact: the event lands in the third step, not
#: in the simulator's first (which also measures the initial contact set).
LEAD = 2.5 * TIME_STEP


def rocking_block_event(seed: int) -> float:
    """Wall time [us] of the hooked step holding the rocking block's impact: the block falls
    flat onto its two corners and arrives with the journal's pre-impact velocity (0.4429 m/s
    down), released :data:`LEAD` before it on the ballistic path (``v t - g t^2 / 2`` higher,
    ``g t`` slower)."""
    client = p.connect(p.DIRECT)
    p.setGravity(0, 0, -9.81, physicsClientId=client)
    p.setPhysicsEngineParameter(fixedTimeStep=TIME_STEP, physicsClientId=client)
    example = planar.example("rocking_block")
    speed = -example.v_minus[1]
    lift = np.array([0.0, speed * LEAD - 0.5 * 9.81 * LEAD**2, 0.0])
    load_planar_example(client, "rocking_block", example.configuration + lift, example.v_minus + np.array([0.0, 9.81 * LEAD, 0.0]))
    simulator = ImpactSimulator(RouthImpact(example.step, example.max_steps), client=client, seed=seed, on_failure="fallback")
    elapsed = float("nan")
    for _ in range(24):
        start = time.perf_counter()
        events = simulator.step()
        if events:
            elapsed = 1e6 * (time.perf_counter() - start)
            break
    p.disconnect(client)
    return elapsed


#: The sliding cube: its speed along the ground [m/s], friction coefficient, and timed steps.
SLIDE_SPEED, SLIDE_FRICTION, SLIDE_STEPS = 1.0, 0.05, 240


def sliding_cube(ground: str) -> tuple[float, float, float]:
    """Median per-step wall times [us] of the cube sliding over ``ground`` at :data:`SLIDE_SPEED`
    (after it settled), hooked and plain, and the share of hooked steps the budget skipped.
    The world is built twice, as in :func:`measure`, and stepped in alternate blocks."""
    cube = next(world for world in DROP_WORLDS if world.name == "cube")
    plain, hooked = build(cube, ground, 0.0), build(cube, ground, 0.0)
    for client in (plain, hooked):
        for _ in range(240):
            p.stepSimulation(physicsClientId=client)
        body = p.getBodyUniqueId(p.getNumBodies(physicsClientId=client) - 1, physicsClientId=client)
        p.changeDynamics(body, -1, lateralFriction=SLIDE_FRICTION, physicsClientId=client)
        p.resetBaseVelocity(body, [SLIDE_SPEED, 0.0, 0.0], [0.0, 0.0, 0.0], physicsClientId=client)
    simulator = ImpactSimulator(RouthImpact("auto", 50), client=hooked, seed=0, on_failure="fallback")
    simulator.step()  # the first step measures the whole contact set
    times = _timed_in_blocks({"plain": lambda: ORIGINAL_STEP(physicsClientId=plain), "hooked": simulator.step}, SLIDE_STEPS)
    skipped = simulator.budget_steps / (SLIDE_STEPS + 1)
    for client in (plain, hooked):
        p.disconnect(client)
    return _median(times["hooked"]), _median(times["plain"]), skipped


def required_calls(
    client: int, simulator: ImpactSimulator, moving: dict[int, tuple[int, ...]], repeats: int = 240
) -> dict[str, list[float]]:
    """Wall times [us] of two lean kinds of resting steps, in alternate blocks with Bullet's bare
    steps of the same world (``client``'s, at rest, its bodies ``moving``: id -> joints; keys ``floor``,
    ``least``, ``bare``).

    ``floor`` makes only Bullet's step and the PyBullet calls a resting hooked step cannot do
    without, however lean its Python: the client and body-count check, the time step, the state
    read before the step (did the user change anything?) and after it (how fast is everything
    moving?), Bullet's contact points (did it push a point out of contact?) and the static
    bodies' poses (did the user move one?); each call as the simulator makes it
    (``getJointStates`` for a body without spherical joints, the client passed by position, the
    contact points through :func:`~bullet_setimpact.bullet.events.contact_points`).  ``least``
    adds what the hook must do with their answers, through the package's own functions: the
    state read before the step compared with the last one, the
    displacement bound of every link over the step (:class:`~bullet_setimpact.bullet.resting.budget.MotionBound`), Bullet's
    points scanned for pushed ones (:func:`~bullet_setimpact.bullet.events.pushed_by_bullet`)
    and the static poses compared; none of the distance budget's bookkeeping.  Both are timed
    with Bullet's step between their calls, as the hooked loop makes them (they too evict some
    of Bullet's data from the caches).  They are the yardstick the resting targets were set
    against, and stay as defined: the simulator itself no longer makes the client and time-step
    checks, the read before the step or the static poses' reads, since it follows the user's
    calls that could change their answers (:mod:`bullet_setimpact.bullet.following`)."""
    reads = {False: p.getJointStates, True: p.getJointStatesMultiDof}  # by whether the body has a spherical joint
    bodies = [(model.body, model.joints, reads[model.spherical]) for model in simulator.world.bodies]
    single_dof = {model.body for model in simulator.world.bodies if not model.spherical}
    statics = {body: p.getBasePositionAndOrientation(body, client) for body in sorted(simulator.world.static_bodies)}
    motion_bound = MotionBound(client, moving)
    touching_keys = {point[1:5] for point in contact_points(client)}  # the pairs at rest (no point of theirs is pushed)
    last = [Snapshot.take(client, moving, single_dof)]

    def read_state() -> None:
        for body, joints, joint_states in bodies:
            p.getBasePositionAndOrientation(body, client)
            p.getBaseVelocity(body, client)
            if joints:
                joint_states(body, joints, client)

    def floor_step() -> None:
        p.getNumBodies(client)
        p.getPhysicsEngineParameters(client)
        read_state()
        ORIGINAL_STEP(client)
        read_state()
        contact_points(client)
        for body in statics:
            p.getBasePositionAndOrientation(body, client)

    def least_step() -> None:
        p.getNumBodies(client)
        p.getPhysicsEngineParameters(client)["fixedTimeStep"]
        _ = Snapshot.take(client, moving, single_dof) == last[0]  # False only at a block's first step: the other loops stepped the world
        ORIGINAL_STEP(client)
        now = Snapshot.take(client, moving, single_dof)
        motion_bound.displacements(last[0], now)
        last[0] = now
        pushed_by_bullet(client, simulator.finder, moving, simulator.contact_tolerance, (), touching_keys, contact_points(client))
        all(p.getBasePositionAndOrientation(body, client) == pose for body, pose in statics.items())

    return _timed_in_blocks({"floor": floor_step, "least": least_step, "bare": lambda: ORIGINAL_STEP(client)}, repeats)


def _timed_in_blocks(loops: dict[str, Callable[[], object]], steps: int) -> dict[str, list[float]]:
    """Wall time [us] of each of ``steps`` calls of every loop (name -> one step), the loops
    taking turns in blocks of :data:`BLOCK` steps (see the module docstring)."""
    times: dict[str, list[float]] = {name: [] for name in loops}
    for first in range(0, steps, BLOCK):
        for name, step in loops.items():
            for _ in range(min(BLOCK, steps - first)):
                start = time.perf_counter()
                step()
                times[name].append(1e6 * (time.perf_counter() - start))
    return times


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worlds", nargs="*", default=[name for name, _, _ in WORLDS], help="worlds to measure (default: all)")
    parser.add_argument("--seeds", type=int, default=3, help="drops per world, from 2, 5, 10 cm ... (default 3)")
    parser.add_argument("--seconds", type=float, default=2.0, help="simulated seconds per drop (default 2)")
    parser.add_argument("--settle", type=float, default=2.0, help="untimed seconds after the drop (default 2)")
    parser.add_argument("--settled", type=float, default=1.0, help="timed seconds at rest after those (default 1)")
    args = parser.parse_args()
    # Expected on the *_plane worlds (a true GEOM_PLANE ground, measured on purpose): printed, it split the table.
    warnings.filterwarnings("ignore", category=ManifoldCompletionWarning)
    # The kuka world lowers its joint damping, which PyBullet cannot report (DropWorld): not unstable.
    warnings.filterwarnings("ignore", category=UnstableDampingWarning)
    # The drop worlds are built before their simulator, as the measurements always were: the robots'
    # load-time motors act as Bullet runs them in split steps (README, motors through an impact step).
    warnings.filterwarnings("ignore", category=UnknownMotorWarning)
    chosen = [entry for entry in WORLDS if entry[0] in args.worlds]
    steps, settle, settled = (round(seconds / TIME_STEP) for seconds in (args.seconds, args.settle, args.settled))
    heights = [0.02, 0.05, 0.10, 0.15, 0.20][: args.seeds]
    print(
        f"per-step medians [us] over {len(heights)} drops of {args.seconds:g} s (heights {heights} m), then {args.settled:g} s "
        f"settled after {args.settle:g} s more; hooked / plain ratios"
    )
    header = f"{'world':<13} {'free':>17} {'rest':>19} {'Bullet':>13} {'event':>17} {'whole drop':>11} {'events':>7} {'skipped':>8}"
    print(f"{header} {'settled':>19} {'skipped':>8} {'floor':>6} {'least':>6}")
    event_steps: dict[str, list[float]] = {}
    for name, world, ground in chosen:
        runs = [measure(world, ground, height, seed, steps, settle, settled) for seed, height in enumerate(heights)]
        merged: dict[str, list[float]] = {}
        for run in runs:
            for key, values in run.items():
                merged.setdefault(key, []).extend(values)
        plain_contact = merged.get("plain:rest", []) or merged.get("plain:free", [])
        free = (_median(merged.get("hooked:free", [])), _median(merged.get("plain:free", [])))
        rest = (_median(merged.get("hooked:rest", [])), _median(merged.get("plain:rest", [])))
        bullet = _median(merged.get("hooked:rest:bullet", []))
        event = (_median(merged.get("hooked:event", [])), _median(plain_contact))
        at_rest = (_median(merged.get("hooked:settled", [])), _median(merged.get("plain:settled", [])))
        floor, least = (_median(merged[key]) / _median(merged["floor:bare"]) for key in ("floor", "least"))
        whole = statistics.median(run["hooked:total"][0] / run["plain:total"][0] for run in runs)
        print(
            f"{name:<13} {free[0]:6.0f}/{free[1]:4.0f} {free[0] / free[1]:5.2f}x "
            f"{rest[0]:6.0f}/{rest[1]:5.0f} {rest[0] / rest[1]:5.2f}x {bullet:6.0f} {bullet / rest[1]:5.2f}x "
            f"{event[0]:6.0f}/{event[1]:4.0f} {event[0] / event[1]:5.1f}x {whole:10.2f}x {len(merged.get('hooked:event', [])):7d} "
            f"{100 * statistics.median(merged['budget']):7.0f}% {at_rest[0]:6.0f}/{at_rest[1]:5.0f} {at_rest[0] / at_rest[1]:5.2f}x "
            f"{100 * statistics.median(merged['budget:settled']):7.0f}% {floor:5.2f}x {least:5.2f}x"
        )
        event_steps[name] = merged.get("hooked:event", [])
    rocking = [rocking_block_event(seed) for seed in range(max(5, 3 * args.seeds))]
    line = f"event steps [us], median (min-max): {_spread(rocking)} rocking block releases"
    if event_steps.get("a1"):
        line += f"; {_spread(event_steps['a1'])} a1 landings"
    print(line)
    for ground in ("box", "plane"):
        hooked, plain, skipped = sliding_cube(ground)
        print(
            f"cube sliding at {SLIDE_SPEED:g} m/s (mu {SLIDE_FRICTION:g}) on the {ground} ground: {hooked:.0f}/{plain:.0f} us "
            f"{hooked / plain:.1f}x per step, {100 * skipped:.0f}% of hooked steps skipped"
        )


def _spread(values: list[float]) -> str:
    return f"{_median(values):.0f} ({min(values):.0f}-{max(values):.0f}) over {len(values)}"


if __name__ == "__main__":
    main()

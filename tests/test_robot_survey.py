"""Robot survey (issue 10, item 7): pybullet_data bodies dropped on a box ground and on a
true ``GEOM_PLANE``, under Routh and Anitescu-Potra, with ``on_failure="raise"``.

For each body x ground x law, the world is stepped for ``SECONDS`` at 240 Hz hooked, and a
twin world plainly (``p.stepSimulation``).  Checked:

- no exception (an impact the law cannot resolve raises ``ImpactFailure``);
- no event gains kinetic energy: ``E+ <= E- (1 + 1e-9)``, the simulator's own acceptance
  bound (journal Theorem 3: the Routh law dissipates; Anitescu-Potra is an inelastic LCP);
- the deepest penetration the hooked world ever shows (``getContactPoints`` distance after
  every step) is within Bullet's own for the same world plus ``PENETRATION_SLACK``: the
  hook resolves impacts at a gap of ``-contact_tolerance / 10`` and leaves resting contact
  to Bullet, so it must not sink bodies deeper than Bullet does.

Every drop is from 5 cm (landing after 0.1 s); the whole survey (16 bodies x 2 grounds x 2
laws, 2 s each) costs about a minute and a half on the development machine.  The jenga
stack is left out: its landing is one 84-contact event whose LCP takes tens of seconds
(``benchmarks/jenga.py``).
Run as a script to print the table: ``python tests/test_robot_survey.py``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import pybullet as p
import pytest

from bullet_setimpact.bullet.drop_worlds import DROP_WORLDS, GROUNDS, DropWorld, load_drop_world
from bullet_setimpact.bullet.simulator import ImpactSimulator
from bullet_setimpact.laws import get_law

SECONDS = 2.0
TIME_STEP = 1.0 / 240.0
LAWS = ("routh", "anitescu-potra")
#: Extra penetration [m] allowed beyond Bullet's own: 1 mm, ten times the contact tolerance
#: (the hook localizes impacts at -1e-5 m and leaves resting contact to Bullet, whose
#: per-step sinking is of the order of its 1 mm-scale collision margins).
PENETRATION_SLACK = 1e-3
WORLDS = [world for world in DROP_WORLDS if world.name != "jenga"]


@dataclass(frozen=True)
class Row:
    """One survey run."""

    world: str
    ground: str
    law: str
    events: int
    worst_gain: float  # largest (E+ - E-) / E- over the events
    penetration: float  # deepest penetration of the hooked world [m]
    bullet_penetration: float  # deepest penetration of the plain world [m]
    seconds: float  # wall time of the hooked loop


def _client() -> int:
    client = p.connect(p.DIRECT)
    p.setGravity(0, 0, -9.81, physicsClientId=client)
    p.setPhysicsEngineParameter(fixedTimeStep=TIME_STEP, physicsClientId=client)
    return client


def _depth(client: int) -> float:
    return max((-point[8] for point in p.getContactPoints(physicsClientId=client)), default=0.0)


def survey(world: DropWorld, ground: str, law: str, seconds: float = SECONDS) -> Row:
    """Drop ``world`` on ``ground`` hooked with ``law`` and plainly; the run's :class:`Row`."""
    plain, hooked = _client(), _client()
    try:
        load_drop_world(plain, world, ground)
        load_drop_world(hooked, world, ground)
        simulator = ImpactSimulator(get_law(law), hooked, seed=0, on_failure="raise")
        bullet_depth = depth = 0.0
        elapsed = 0.0
        for _ in range(round(seconds / TIME_STEP)):
            p.stepSimulation(physicsClientId=plain)
            bullet_depth = max(bullet_depth, _depth(plain))
            start = time.perf_counter()
            simulator.step()
            elapsed += time.perf_counter() - start
            depth = max(depth, _depth(hooked))
        gains = [(event.energy_after - event.energy_before) / max(event.energy_before, 1e-300) for event in simulator.events]
        return Row(world.name, ground, law, len(simulator.events), max(gains, default=0.0), depth, bullet_depth, elapsed)
    finally:
        p.disconnect(plain)
        p.disconnect(hooked)


def table(rows: list[Row]) -> str:
    """The survey table (body x ground x law: events, worst penetration, energy)."""
    lines = [f"{'body':<13} {'ground':<6} {'law':<15} {'events':>6} {'max dE/E':>10} {'pen [mm]':>9} {'bullet':>7} {'time [s]':>8}"]
    lines += [
        f"{r.world:<13} {r.ground:<6} {r.law:<15} {r.events:6d} {r.worst_gain:10.2e} {1e3 * r.penetration:9.3f} "
        f"{1e3 * r.bullet_penetration:7.3f} {r.seconds:8.2f}"
        for r in rows
    ]
    return "\n".join(lines)


@pytest.mark.slow
def test_robot_survey_has_no_failure_no_energy_gain_and_bullets_penetration(capsys: pytest.CaptureFixture[str]) -> None:
    """Every body x ground x law runs without an exception, gains no energy at any event and
    sinks no deeper than Bullet does (module docstring)."""
    rows = [survey(world, ground, law) for world in WORLDS for ground in GROUNDS for law in LAWS]
    with capsys.disabled():
        print("\n" + table(rows))
    assert len({row.world for row in rows}) >= 15
    gaining = [row for row in rows if row.worst_gain > 1e-9]
    assert not gaining, table(gaining)
    sinking = [row for row in rows if row.penetration > row.bullet_penetration + PENETRATION_SLACK]
    assert not sinking, table(sinking)
    assert sum(row.events for row in rows) > 0  # the survey exercises the laws


if __name__ == "__main__":
    import sys

    chosen = [world for world in WORLDS if len(sys.argv) < 2 or world.name in sys.argv[1:]]
    for world in chosen:
        print(table([survey(world, ground, law) for ground in GROUNDS for law in LAWS]).split("\n", 1)[1], flush=True)

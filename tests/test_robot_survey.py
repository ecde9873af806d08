"""Robot survey: pybullet_data bodies dropped on a box ground and on a
true ``GEOM_PLANE``, under Routh and Anitescu-Potra, with ``on_failure="raise"``.

For each body x ground x law, the world is stepped for ``SECONDS`` at 240 Hz hooked, and a
twin world plainly (``p.stepSimulation``).  Checked:

- no exception (an impact the law cannot resolve raises ``ImpactFailure``);
- no event gains kinetic energy: ``E+ <= E- (1 + 1e-9)``, the simulator's own acceptance
  bound (journal Theorem 3: the Routh law dissipates; Anitescu-Potra is an inelastic LCP);
- between two events of one step (the same bodies, ``t_b - t_a < dt``) the kinetic energy
  rises by no more than gravity can add: its power on links of masses ``m_i`` and centre
  velocities ``v_i`` is at most ``g sum m_i |v_i| <= g sqrt(M sum m_i v_i^2) <= g sqrt(2 M K)``
  (Cauchy-Schwarz; ``M`` the bodies' total mass), so the rise is at most
  ``g sqrt(2 M K) (t_b - t_a)``, taken with twice the larger of the two energies.  Bullet's
  resting contacts, default joint motors (target velocity 0) and damping only dissipate, but
  its penetration correction pushes a contact ``d`` deep out at ``ERP d / dt`` per whole step,
  at most ``M (ERP d / dt)^2 / 2`` of energy (``ERP`` <= 0.2, PyBullet's largest default;
  ``d`` the deeper of the two events' ``max_penetration``), allowed too, with 1 uJ of slack.
  A rise beyond that is energy the stepping put in (the correction at ``ERP d / tau`` on a
  short partial step did: 544 J in one step for the humanoid);
- the deepest penetration the hooked world ever shows (``getContactPoints`` distance after
  every step) is within Bullet's own for the same world plus ``PENETRATION_SLACK``: the
  hook resolves impacts at a gap of ``-contact_tolerance / 10`` and leaves resting contact
  to Bullet, so it must not sink bodies deeper than Bullet does.

Every drop is from 5 cm (landing after 0.1 s); the whole survey (17 bodies x 2 grounds x 2
laws, 2 s each) costs two and a half to four minutes on the 2-core machines we measured, most
of it the jenga stack: its landing events hold 84 contacts (12-40 s under Routh per ground;
its Anitescu-Potra LCP on ``GEOM_PLANE`` needs the restart stage of ``solve_lcp``, 17-26 s).
Run as a script to print the table: ``python tests/test_robot_survey.py``.  The same checks
hold for the free bodies thrown (turned, moving and spinning) instead of dropped flat
(:func:`test_thrown_bodies_keep_the_survey_guarantees`, Routh only, about ten seconds).
"""

from __future__ import annotations

import itertools
import time
import warnings
from dataclasses import dataclass

import numpy as np
import pybullet as p
import pytest

from bullet_setimpact.bullet.simulator import ImpactSimulator
from bullet_setimpact.errors import UnstableDampingWarning
from bullet_setimpact.laws import get_law

from .drop_worlds import DROP_WORLDS, GROUNDS, DropWorld, bullet_output_discarded, load_drop_world, lowest_point

SECONDS = 2.0
TIME_STEP = 1.0 / 240.0
GRAVITY = 9.81
LAWS = ("routh", "anitescu-potra")
#: Extra penetration [m] allowed beyond Bullet's own: 1 mm, ten times the contact tolerance
#: (the hook localizes impacts at -1e-5 m and leaves resting contact to Bullet, whose
#: per-step sinking is of the order of its 1 mm-scale collision margins).
PENETRATION_SLACK = 1e-3
WORLDS = list(DROP_WORLDS)
#: The bodies :func:`test_thrown_bodies_keep_the_survey_guarantees` throws: every free one (not the
#: jenga stack, whose landing costs tens of seconds, nor the arms, fixed to their table).
THROWN_WORLDS = [world for world in WORLDS if world.urdf != "jenga" and not world.on_table]
#: Throws of that test (seeds 0 .. THROWS - 1), each body at least once.
THROWS = 16


@dataclass(frozen=True)
class Throw:
    """A release other than a flat drop: the body turned by the Euler angles ``tilt`` [rad] about
    its base, its lowest point ``height`` [m] above the ground, with base velocities ``linear``
    [m/s] and ``angular`` [rad/s]."""

    height: float
    tilt: tuple[float, ...]
    linear: tuple[float, ...]
    angular: tuple[float, ...]

    @classmethod
    def drawn(cls, seed: int) -> Throw:
        """Up to 30 cm up, up to 0.6 rad about each axis, up to 1.5 m/s and 4 rad/s along each axis (uniform)."""
        rng = np.random.default_rng(seed)
        return cls(
            float(rng.uniform(0.0, 0.3)),
            tuple(rng.uniform(-0.6, 0.6, 3).tolist()),
            tuple(rng.uniform(-1.5, 1.5, 3).tolist()),
            tuple(rng.uniform(-4.0, 4.0, 3).tolist()),
        )

    def apply(self, client: int, body: int) -> None:
        """Turn ``body`` (loaded by ``load_drop_world`` at ``height``), lift it back to that height, set its velocities."""
        position, orientation = p.getBasePositionAndOrientation(body, physicsClientId=client)
        before = lowest_point(client, body)
        _, turned = p.multiplyTransforms([0, 0, 0], p.getQuaternionFromEuler(self.tilt), [0, 0, 0], orientation)
        p.resetBasePositionAndOrientation(body, position, turned, physicsClientId=client)
        lifted = [position[0], position[1], position[2] + before - lowest_point(client, body)]
        p.resetBasePositionAndOrientation(body, lifted, turned, physicsClientId=client)
        p.resetBaseVelocity(body, self.linear, self.angular, physicsClientId=client)


@dataclass(frozen=True)
class Row:
    """One survey run."""

    world: str
    ground: str
    law: str
    events: int
    worst_gain: float  # largest (E+ - E-) / E- over the events
    worst_rise: float  # largest energy rise between two events of one step beyond gravity's bound [J]
    penetration: float  # deepest penetration of the hooked world [m]
    bullet_penetration: float  # deepest penetration of the plain world [m]
    seconds: float  # wall time of the hooked loop


def _client() -> int:
    client = p.connect(p.DIRECT)
    p.setGravity(0, 0, -GRAVITY, physicsClientId=client)
    p.setPhysicsEngineParameter(fixedTimeStep=TIME_STEP, physicsClientId=client)
    return client


def _depth(client: int) -> float:
    return max((-point[8] for point in p.getContactPoints(physicsClientId=client)), default=0.0)


def survey(world: DropWorld, ground: str, law: str, seconds: float = SECONDS, throw: Throw | None = None) -> Row:
    """Drop ``world`` on ``ground`` (5 cm, flat; or ``throw`` it) hooked with ``law`` and plainly; the run's :class:`Row`."""
    plain, hooked = _client(), _client()
    try:
        for client in (plain, hooked):
            with bullet_output_discarded():  # URDF warnings at every load (the humanoid's, the husky's)
                bodies = load_drop_world(client, world, ground, 0.05 if throw is None else throw.height)
            if throw is not None:
                throw.apply(client, bodies[0])
        with warnings.catch_warnings():  # the kuka world lowers its damping, which PyBullet cannot report (DropWorld)
            warnings.simplefilter("ignore", UnstableDampingWarning)
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
        return Row(
            world.name,
            ground,
            law,
            len(simulator.events),
            max(gains, default=0.0),
            _worst_rise(hooked, simulator),
            depth,
            bullet_depth,
            elapsed,
        )
    finally:
        p.disconnect(plain)
        p.disconnect(hooked)


def _worst_rise(client: int, simulator: ImpactSimulator) -> float:
    """Largest kinetic-energy rise between two events of one step beyond gravity's bound [J]
    (module docstring); -inf when no two events share a step."""
    worst = -float("inf")
    for before, after in itertools.pairwise(simulator.events):
        if after.bodies != before.bodies or after.time - before.time >= TIME_STEP:
            continue
        mass = sum(
            p.getDynamicsInfo(body, link, physicsClientId=client)[0]
            for body in after.bodies
            for link in range(-1, p.getNumJoints(body, physicsClientId=client))
        )
        energy = 2.0 * max(before.energy_after, after.energy_before)
        correction = 0.2 * max(before.max_penetration, after.max_penetration) / TIME_STEP
        bound = GRAVITY * (2.0 * mass * energy) ** 0.5 * (after.time - before.time) + 0.5 * mass * correction**2 + 1e-6
        worst = max(worst, after.energy_before - before.energy_after - bound)
    return worst


def table(rows: list[Row]) -> str:
    """The survey table (body x ground x law: events, worst penetration, energy)."""
    lines = [
        f"{'body':<13} {'ground':<6} {'law':<15} {'events':>6} {'max dE/E':>10} {'rise [J]':>9} "
        f"{'pen [mm]':>9} {'bullet':>7} {'time [s]':>8}"
    ]
    lines += [
        f"{r.world:<13} {r.ground:<6} {r.law:<15} {r.events:6d} {r.worst_gain:10.2e} {r.worst_rise:9.2g} {1e3 * r.penetration:9.3f} "
        f"{1e3 * r.bullet_penetration:7.3f} {r.seconds:8.2f}"
        for r in rows
    ]
    return "\n".join(lines)


def _assert_guarantees(rows: list[Row]) -> None:
    """No event gained energy (beyond the simulator's acceptance bound 1e-9), no rise between two
    events of one step beyond gravity's bound, no penetration deeper than the plain twin's plus
    :data:`PENETRATION_SLACK` (module docstring); a failure prints the offending rows."""
    gaining = [row for row in rows if row.worst_gain > 1e-9]
    assert not gaining, table(gaining)
    rising = [row for row in rows if row.worst_rise > 0.0]
    assert not rising, table(rising)
    sinking = [row for row in rows if row.penetration > row.bullet_penetration + PENETRATION_SLACK]
    assert not sinking, table(sinking)


@pytest.mark.slow
def test_robot_survey_has_no_failure_no_energy_gain_and_bullets_penetration(capsys: pytest.CaptureFixture[str]) -> None:
    """Every body x ground x law runs without an exception, gains no energy at any event or
    between two events of one step, and sinks no deeper than Bullet does (module docstring)."""
    rows = [survey(world, ground, law) for world in WORLDS for ground in GROUNDS for law in LAWS]
    with capsys.disabled():
        print("\n" + table(rows))
    assert len({row.world for row in rows}) >= 15
    _assert_guarantees(rows)
    assert sum(row.events for row in rows) > 0  # the survey exercises the laws


@pytest.mark.slow
def test_thrown_bodies_keep_the_survey_guarantees(capsys: pytest.CaptureFixture[str]) -> None:
    """The survey's guarantees (module docstring) when the bodies are thrown instead of dropped flat:
    each of :data:`THROWN_WORLDS` in turn, on alternate grounds, with :meth:`Throw.drawn` of seeds
    ``0 .. THROWS - 1``, under the Routh law with ``on_failure="raise"``.  A flat drop lands on its
    lowest contacts at once; a turned, moving, spinning body arrives obliquely, at one contact or a
    few at a time, and slides and tumbles afterwards.  The checks are bounds every run must meet,
    whatever the trajectory: no exception, no event gains energy (journal Theorem 3, within the
    simulator's acceptance bound 1e-9), no rise between two events of one step beyond gravity's
    bound, and no deeper penetration than Bullet's own twin world plus :data:`PENETRATION_SLACK`."""
    rows = []
    for seed in range(THROWS):
        world = THROWN_WORLDS[seed % len(THROWN_WORLDS)]
        ground = GROUNDS[(seed + seed // len(THROWN_WORLDS)) % len(GROUNDS)]
        rows.append(survey(world, ground, "routh", throw=Throw.drawn(seed)))
    with capsys.disabled():
        print("\n" + table(rows))
    assert {row.world for row in rows} == {world.name for world in THROWN_WORLDS}
    _assert_guarantees(rows)
    assert sum(row.events for row in rows) >= 2 * THROWS  # the throws exercise the law


if __name__ == "__main__":
    import sys

    chosen = [world for world in WORLDS if len(sys.argv) < 2 or world.name in sys.argv[1:]]
    print(table([]), flush=True)  # the header; each body's rows as soon as they are measured
    for world in chosen:
        print(table([survey(world, ground, law) for ground in GROUNDS for law in LAWS]).split("\n", 1)[1], flush=True)

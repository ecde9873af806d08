"""Scenario scripts (``scenarios/``): discovery, parameters, every law on every scenario, physics.

Every expected number below is derived in the test's docstring from the scenario's stated
geometry and initial state (g = 9.81), never read off the code under test.  Bullet
integrates with semi-implicit Euler, so a body falling ``h`` arrives about ``dt / 2`` early
and about ``g dt / 2`` slower than ``sqrt(2 g h)``; tolerances say so where it matters.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pybullet as p
import pytest
from scipy.integrate import solve_ivp

from bullet_setimpact import LAWS
from bullet_setimpact.bullet import following
from bullet_setimpact.bullet.contacts import ContactFinder
from bullet_setimpact.bullet.simulator import ImpactEvent, ImpactFailure, ImpactSimulator
from bullet_setimpact.montecarlo.labels import DISK_STACK_LETTERS, bottom_corner_label, link_label, pair_label
from bullet_setimpact.montecarlo.scenario import Scenario, available, build, describe, load, make_law, parameters

GRAVITY = 9.81
SCENARIOS = (
    "rocking_block",
    "compass_gait",
    "box_wall",
    "ramone",
    "disk_stack",
    "slab_drop",
    "box_into_wall",
    "sphere_stack",
    "quadruped_landing",
    "humanoid_footfall",
    "zeno_block",
    "urdf_drop",
    "bouncing_ball",
    "hopping_leg",
)


@pytest.fixture(autouse=True)
def followed() -> Iterator[None]:
    """Every world here is built while the package follows the clients, as
    :func:`~bullet_setimpact.montecarlo.scenario.make` (and so the CLI) builds it: the motors
    the robots get at load and those the scripts command are known to their simulators, and
    held through split steps (:mod:`bullet_setimpact.bullet.motors`)."""
    following.follow()
    yield
    following.unfollow()


def rollout(
    scenario: Scenario, law=None, duration: float | None = None, seed: int = 0, on_failure: str = "raise"
) -> tuple[ImpactSimulator, list[list[str]]]:  # type: ignore[no-untyped-def]
    """Simulate ``duration`` (default the scenario's) and label each event's contacts right
    after the step that produced it (labels read the bodies' current pose)."""
    sim = ImpactSimulator(scenario.law if law is None else law, scenario.client, seed=seed, on_failure=on_failure)
    dt = p.getPhysicsEngineParameters(physicsClientId=scenario.client)["fixedTimeStep"]
    labels: list[list[str]] = []
    for _ in range(round((scenario.duration if duration is None else duration) / dt)):
        labels += [[scenario.contact_label(contact) for contact in event.contacts] for event in sim.step()]
    return sim, labels


def by_label(event: ImpactEvent, labels: list[str], velocity: np.ndarray) -> dict[str, float]:
    """Normal velocity of each labelled contact row (one entry per label; merged rows agree)."""
    return dict(zip(labels, event.problem.normal_velocities(velocity), strict=True))


# --------------------------------------------------------------------------- discovery
def test_available_lists_every_scenario_with_a_description() -> None:
    """All twelve scripts are found, each with a one-line description, a "Measures:"
    paragraph and a DEFAULTS dict of simple types that includes a positive duration."""
    scenarios = available()
    assert set(SCENARIOS) <= set(scenarios)
    for name in SCENARIOS:
        assert scenarios[name].strip(), name
        module = load(name)
        assert "Measures:" in (module.__doc__ or ""), name
        assert isinstance(module.DEFAULTS["duration"], float), name
        assert module.DEFAULTS["duration"] > 0.0, name
        assert all(isinstance(value, (bool, int, float, str)) for value in module.DEFAULTS.values()), name


def test_parameters_reject_unknown_names_and_wrong_types(client: int) -> None:
    """An unknown parameter and a value of the wrong type are refused with messages naming
    them; a numeric string is coerced to the default's type."""
    for name in SCENARIOS:
        with pytest.raises(ValueError, match="no_such_parameter"):
            parameters(name, {"no_such_parameter": 1.0})
        with pytest.raises(ValueError, match=r"'duration'.*'forever'"):
            parameters(name, {"duration": "forever"})
        assert parameters(name, {"duration": "0.25"})["duration"] == 0.25
        for key in ("duration", "time_step"):
            with pytest.raises(ValueError, match=rf"'{key}' must be > 0 s, got 0.0"):
                parameters(name, {key: 0.0})
    with pytest.raises(ValueError, match=r"'height'.*'high'"):
        parameters("rocking_block", {"height": "high"})
    with pytest.raises(ValueError, match="height"):
        build("slab_drop", client, {"height": -1.0})


def test_scenario_docstring_needs_a_measures_paragraph() -> None:
    """``describe`` splits a script's docstring into its first line and its one-line
    "Measures:" paragraph, and refuses a docstring without one."""
    fields = describe("Title line.\n\nBody.\n\nMeasures: contacts A\n  and B.\n\nMore.")
    assert fields == {"description": "Title line.", "measures": "contacts A and B."}
    with pytest.raises(ValueError, match="Measures:"):
        describe("Title line only.")


def test_contact_labels_name_links_pairs_and_corners(client: int) -> None:
    """The shared labellers, on the rocking block resting flat (corners at block-frame
    x = -0.5 and +0.5, z = -1): ``bottom_corner_label`` gives A and B, ``link_label`` the
    link's URDF name, ``pair_label`` the letter of a named pair; ``Contact.side`` refuses a
    body that is not in the contact."""
    scenario = build("rocking_block", client, {"height": 0.0})
    block, ground = scenario.bodies["block"], scenario.extra["ground"]
    contacts = ContactFinder(client, [block], 1e-3).contacts()
    labels = sorted(bottom_corner_label(client, block, 2, contact) for contact in contacts)
    assert labels[0] == "A" and labels[-1] == "B" and set(labels) == {"A", "B"}
    name = p.getJointInfo(block, 2, physicsClientId=client)[12].decode()
    assert link_label(client, block, contacts[0]) == name
    assert link_label(client, block, contacts[0], {name: "X"}) == "X"
    names = {block: "left", ground: "ground"}
    assert pair_label(names, DISK_STACK_LETTERS, contacts[0]) == "A"
    assert pair_label({block: "block", ground: "floor"}, DISK_STACK_LETTERS, contacts[0]) == "block-floor"
    with pytest.raises(ValueError, match="body 12345 is not in the contact"):
        contacts[0].side(12345)


# --------------------------------------------------------------------------- every law
@pytest.mark.parametrize("law", sorted(LAWS))
@pytest.mark.parametrize("name", SCENARIOS)
def test_scenario_runs_half_a_second_under_every_law(client: int, name: str, law: str) -> None:
    """Each scenario builds and runs 0.5 s under each law with ``on_failure="raise"``; the
    Scenario is complete, every contact gets a label and the final state is finite.

    One documented exception: Johnson et al.'s plastic reset only sticks contacts, and drops
    a contact whose sticking impulse leaves the friction cone (their Assumption A12, made for
    massless limbs), and it refuses to choose when IV complementarity has several modes.  So
    on a sliding impact (box and wall, the quadruped's splayed feet) or two flat feet (the
    humanoid) it reports that it cannot resolve the impact; the simulator must then raise
    with that reason, and with ``on_failure="fallback"`` finish the run on the checked
    Anitescu-Potra outcome, saying why on every such event.

    Both runs' worlds are built while the package follows the client (:func:`followed`).
    """
    scenario = build(name, client)
    assert scenario.name == name
    assert scenario.client == client
    assert scenario.bodies
    assert scenario.description == available()[name]
    assert scenario.measures
    assert scenario.duration == load(name).DEFAULTS["duration"]
    try:
        sim, labels = rollout(scenario, make_law(law, scenario), duration=0.5)
    except ImpactFailure as error:
        failure = str(error)
        assert law == "plastic", failure
        assert any(reason in failure for reason in ("Assumption A12", "no mode is selected", "MAX_MODE_CONTACTS"))
        p.resetSimulation(physicsClientId=client)
        scenario = build(name, client)
        sim, labels = rollout(scenario, make_law(law, scenario), duration=0.5, on_failure="fallback")
        fallbacks = [event for event in sim.events if event.law != "plastic"]
        assert fallbacks and all(event.failure.startswith("plastic:") for event in fallbacks)
    assert all(label and isinstance(label, str) for event in labels for label in event)
    for event in sim.events:
        assert event.energy_after <= event.energy_before * (1.0 + 1e-9) + 1e-12
    assert all(np.all(np.isfinite(value)) for value in scenario.observe().values())


# --------------------------------------------------------------------------- journal examples
def test_rocking_block_lands_flat_at_free_fall_speed(client: int) -> None:
    """Dropped from h = 1 cm the block lands on A and B at once at t = sqrt(2 h / g) =
    0.04515 s with v- = (0, -sqrt(2 g h), 0) = (0, -0.4429, 0), the journal's v-.  At
    dt = 1 ms Bullet arrives up to dt early and g dt / 2 = 5e-3 m/s slow."""
    scenario = build("rocking_block", client, {"height": 0.01, "time_step": 1e-3, "duration": 0.06})
    sim, labels = rollout(scenario)
    event = sim.events[0]
    assert set(labels[0]) == {"A", "B"}
    assert event.time == pytest.approx(np.sqrt(2 * 0.01 / GRAVITY), abs=2e-3)
    np.testing.assert_allclose(event.v_minus, [0.0, -np.sqrt(2 * GRAVITY * 0.01), 0.0], atol=6e-3)
    assert min(event.problem.normal_velocities(event.v_plus)) >= -1e-9


def test_compass_gait_starts_at_the_journal_impact(client: int) -> None:
    """At t = 0 the leading foot A falls at 2 l sin(78 deg) leg_rate = 2 sin(78 deg) 0.25 =
    0.48907 m/s while the trailing foot B rests (the hip velocity is chosen so)."""
    sim, labels = rollout(build("compass_gait", client), duration=1 / 240)
    event = sim.events[0]
    assert event.time == 0.0
    normal = by_label(event, labels[0], event.v_minus)
    assert normal["A"] == pytest.approx(-2 * np.sin(np.deg2rad(78.0)) * 0.25, abs=1e-6)
    assert normal["B"] == pytest.approx(0.0, abs=1e-6)


def test_box_wall_starts_at_the_journal_impact(client: int) -> None:
    """At t = 0 the box moves at v = (1, 0, 0): corner A slides along the floor (normal +z:
    normal velocity 0) and corner B runs into the wall (normal -x: normal velocity -1)."""
    sim, labels = rollout(build("box_wall", client), duration=1 / 240)
    event = sim.events[0]
    assert event.time == 0.0
    normal = by_label(event, labels[0], event.v_minus)
    assert normal == pytest.approx({"A": 0.0, "B": -1.0}, abs=1e-9)


def test_ramone_starts_at_the_journal_impact(client: int) -> None:
    """With joint rates zero RAMone moves as one rigid body; B at rest makes it a rotation
    at the pitch rate (1 rad/s) about B's contact point, so A, on the floor a distance d
    from B, falls at 1 rad/s x d (d read from the two contact points)."""
    sim, labels = rollout(build("ramone", client), duration=1 / 240)
    event = sim.events[0]
    assert event.time == 0.0
    points = {label: contact.position_a for label, contact in zip(labels[0], event.contacts, strict=True)}
    distance = np.linalg.norm(points["A"] - points["B"])
    normal = by_label(event, labels[0], event.v_minus)
    assert normal["A"] == pytest.approx(-1.0 * distance, rel=1e-3)
    assert normal["B"] == pytest.approx(0.0, abs=1e-6)


def _planar_disk_energy(v: np.ndarray) -> float:
    """KE of disks with blocks (x, y, theta) each: m = 1 kg, I = m R^2 / 2 = 0.5."""
    blocks = v.reshape(-1, 3)
    return float(0.5 * np.sum(blocks[:, :2] ** 2) + 0.5 * 0.5 * np.sum(blocks[:, 2] ** 2))


def _sphere_energy(v: np.ndarray) -> float:
    """KE of free spheres with blocks (v, omega) each: m = 1 kg, I = 2/5 m R^2 = 0.4."""
    blocks = v.reshape(-1, 6)
    return float(0.5 * np.sum(blocks[:, :3] ** 2) + 0.5 * 0.4 * np.sum(blocks[:, 3:] ** 2))


@pytest.mark.parametrize(("name", "energy"), [("disk_stack", _planar_disk_energy), ("sphere_stack", _sphere_energy)])
def test_stack_impact_geometry_and_energy(client: int, name: str, energy) -> None:  # type: ignore[no-untyped-def]
    """The top body (centre (1, 1 + sqrt 3)) touches the bottom ones (centres (0, 1) and
    (2, 1)) along normals at 60 deg from the horizontal, so falling at 1 m/s it strikes C and
    D at -sin 60 deg = -0.8660 m/s while A, B (ground) and E (left-right) are at rest.  The
    kinetic energy, computed here from the event velocities and the bodies' own m and I,
    starts at 1/2 m 1^2 = 0.5 J and never increases at an event over the whole rollout."""
    sim, labels = rollout(build(name, client))
    first = sim.events[0]
    assert first.time == 0.0
    normal = by_label(first, labels[0], first.v_minus)
    assert normal == pytest.approx({"A": 0.0, "B": 0.0, "C": -np.sin(np.pi / 3), "D": -np.sin(np.pi / 3), "E": 0.0}, abs=1e-6)
    assert energy(first.v_minus) == pytest.approx(0.5, abs=1e-9)
    for event in sim.events:
        assert len(event.bodies) * (3 if name == "disk_stack" else 6) == event.v_minus.size
        assert energy(event.v_plus) <= energy(event.v_minus) * (1.0 + 1e-9) + 1e-12


# --------------------------------------------------------------------------- free 3D variants
def test_slab_lands_flat_on_four_corners_or_tilted_on_a(client: int) -> None:
    """Flat from h = 1 cm: all four bottom corners strike at once at sqrt(2 g h) = 0.4429
    m/s (dt = 1 ms: within g dt / 2 + margin).  Tilted by +0.05 rad about -y, the +x side
    (B) is lifted by 1 m x sin 0.05 = 5 cm, so the A edge (A-, A+) lands alone first."""
    sim, labels = rollout(build("slab_drop", client, {"time_step": 1e-3, "duration": 0.06}))
    assert sorted(labels[0]) == ["A+", "A-", "B+", "B-"]
    np.testing.assert_allclose(sim.events[0].v_minus[:3], [0.0, 0.0, -np.sqrt(2 * GRAVITY * 0.01)], atol=6e-3)
    p.resetSimulation(physicsClientId=client)
    sim, labels = rollout(build("slab_drop", client, {"tilt": 0.05, "duration": 0.2}))
    assert sorted(labels[0]) == ["A+", "A-"]


def test_box_into_wall_starts_at_the_journal_impact(client: int) -> None:
    """As the planar box and wall: at v = (1, 0, 0) both floor corners of edge A have normal
    velocity 0 and both wall corners of edge B -1."""
    sim, labels = rollout(build("box_into_wall", client), duration=1 / 240)
    event = sim.events[0]
    assert event.time == 0.0
    normal = dict(zip(labels[0], event.problem.normal_velocities(event.v_minus), strict=True))
    assert normal == pytest.approx({"A-": 0.0, "A+": 0.0, "B-": -1.0, "B+": -1.0}, abs=1e-9)


# --------------------------------------------------------------------------- robots
def test_quadruped_lands_on_four_feet_and_stands(client: int) -> None:
    """Released level with its feet h = 5 cm up, the A1 lands on all four toes at once, its
    base falling at sqrt(2 g h) = 0.990 m/s (less up to g dt = 0.041 m/s at dt = 1/240 s).
    After 1 s the motors hold the posture: with 0.2 m thighs and calves at thigh 0.8 rad and
    knee -1.6 rad each leg spans 0.2 cos 0.8 + 0.2 cos(-0.8) = 0.2787 m below the hip, plus
    the 0.02 m toe radius, so the base (hips at its centre height) stands at 0.2987 m, level."""
    scenario = build("quadruped_landing", client)
    sim, labels = rollout(scenario, duration=1.0)
    assert sorted(labels[0]) == ["FL_toe", "FR_toe", "RL_toe", "RR_toe"]
    assert sim.events[0].v_minus[2] == pytest.approx(-np.sqrt(2 * GRAVITY * 0.05), abs=GRAVITY / 240)
    position, orientation = p.getBasePositionAndOrientation(scenario.bodies["a1"], physicsClientId=client)
    assert position[2] == pytest.approx(0.2987, abs=0.01)
    roll, pitch, _ = p.getEulerFromQuaternion(orientation)
    assert abs(roll) < 0.05
    assert abs(pitch) < 0.05


def test_humanoid_lands_flat_on_both_feet_and_stands(client: int) -> None:
    """Dropped h = 3 cm in its zero posture, both box soles land flat at once: eight
    corners, the base falling at sqrt(2 g h) = 0.767 m/s (less up to g dt).  After 1 s the
    motors hold it upright: the base is h lower than at release (within 1 cm of joint sag
    and contact penetration) and turned less than 0.1 rad."""
    scenario = build("humanoid_footfall", client)
    body = scenario.bodies["humanoid"]
    start, start_orientation = p.getBasePositionAndOrientation(body, physicsClientId=client)
    sim, labels = rollout(scenario, duration=1.0)
    corners = {f"{side}_ankle:{end}-{edge}" for side in ("left", "right") for end in ("heel", "toe") for edge in ("in", "out")}
    assert set(labels[0]) == corners
    assert len(labels[0]) == 8
    assert sim.events[0].v_minus[2] == pytest.approx(-np.sqrt(2 * GRAVITY * 0.03), abs=GRAVITY / 240)
    position, orientation = p.getBasePositionAndOrientation(body, physicsClientId=client)
    assert position[2] == pytest.approx(start[2] - 0.03, abs=0.01)
    turn = p.getDifferenceQuaternion(start_orientation, orientation)
    assert 2.0 * np.arccos(min(1.0, abs(turn[3]))) < 0.1


# --------------------------------------------------------------------------- Zeno
def _half_cycle(rate: float) -> float:
    """Time for the block pivoting on one corner at ``rate`` to swing up and fall back flat:
    journal eq. (56), (I + m r^2) theta'' = -m g r cos(theta + alpha), w = 1, h = 2, m = 1."""
    width, height, mass = 1.0, 2.0, 1.0
    inertia, r, alpha = mass * (width**2 + height**2) / 12.0, np.hypot(width, height) / 2.0, np.arctan2(height, width)
    about_corner = inertia + mass * r**2

    def flat(t: float, y: np.ndarray) -> float:
        return y[0]

    flat.terminal, flat.direction = True, -1  # type: ignore[attr-defined]
    solution = solve_ivp(
        lambda t, y: [y[1], -mass * GRAVITY * r * np.cos(y[0] + alpha) / about_corner],
        (0.0, 10.0),
        [0.0, rate],
        events=flat,
        rtol=1e-10,
        atol=1e-12,
        max_step=0.01,
    )
    return float(solution.t_events[0][0])


def test_zeno_block_rate_ratio_and_accumulation(client: int) -> None:
    """Journal Sec. 4.3 with eq. (68) corrected: each impact scales the angular rate by
    (I - m r^2 cos 2 alpha) / (I + m r^2) = (5/12 + 1.25 x 0.6) / (5/3) = 0.7.  B strikes
    first after one half-cycle of eq. (56) at 1 rad/s (integrated here: 0.987 s; Bullet's
    first-order integration at dt = 1/240 s arrives up to 0.03 s early), at |rate| = 1
    rad/s and B falling at w x 1 rad/s = 1 m/s (less gravity's g dt per step of error).
    The impact times accumulate at sum_k T(0.7^k) = 2.67 s (T a half-cycle): every impact
    comes before 2.7 s, the intervals shrink, and the block is at rest at 3 s."""
    ratio = (5 / 12 + 1.25 * 0.6) / (5 / 3)
    assert ratio == pytest.approx(0.7)
    accumulation = sum(_half_cycle(ratio**k) for k in range(40))
    assert accumulation == pytest.approx(2.67, abs=0.01)
    scenario = build("zeno_block", client)
    sim, labels = rollout(scenario)
    events = sim.events
    first = events[0]
    assert set(labels[0]) == {"A", "B"}
    assert first.time == pytest.approx(_half_cycle(1.0), abs=0.03)
    assert by_label(first, labels[0], first.v_minus)["B"] == pytest.approx(-1.0, abs=0.02)
    rates = [(event.v_minus[2], event.v_plus[2]) for event in events]
    assert rates[0][0] == pytest.approx(-1.0, abs=0.02)
    for before, after in rates[:3]:  # the first three, while the rate is large
        assert after / before == pytest.approx(ratio, abs=5e-3)
    times = np.array([event.time for event in events])
    assert len(times) >= 5
    assert times[-1] < 2.7
    assert np.all(np.diff(np.diff(times)) < 0.0)
    velocity = [state[1] for state in p.getJointStates(scenario.bodies["block"], [0, 1, 2], physicsClientId=client)]
    assert np.abs(velocity).max() < 1e-3


def test_available_reads_docstrings_without_running_scripts(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """``available()`` lists a script whose body would raise if executed: it reads the
    docstring with ``ast`` only."""
    import bullet_setimpact.montecarlo.scenario as scenario_module

    (tmp_path / "exploding.py").write_text('"""Exploding: never run me.\n\nMeasures: nothing.\n"""\nraise RuntimeError("executed")\n')
    monkeypatch.setattr(scenario_module, "SCENARIO_DIR", tmp_path)
    assert available() == {"exploding": "Exploding: never run me."}


def test_distinct_corners_get_distinct_labels() -> None:
    """The default URDF drop (the 1 x 0.5 x 2 m slab, flat) lands on its four bottom corners,
    which all belong to the root link "slab": each gets the signs of its corner in the link
    frame (x and y either sign, z < 0), and the report defines every label."""
    from bullet_setimpact.montecarlo.rollouts import monte_carlo

    results = monte_carlo("urdf_drop", 1, executor="serial", params={"duration": 0.1})
    first = results.records[0].events[0]
    assert sorted(first.labels) == ["slab[+x+y-z]", "slab[+x-y-z]", "slab[-x+y-z]", "slab[-x-y-z]"]
    legend = results.contact_legend()
    assert set(first.labels) <= legend.keys() and all("on ground" in legend[label] for label in first.labels)

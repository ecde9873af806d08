"""The corner watch (``bullet/corner_watch.py``) answers for a link pair evaluated every step:
wherever it answers, its answer is the evaluation's own (``ContactFinder.corner_pair_features``
finds the same touching corners and nothing else, or not)."""

from __future__ import annotations

import os

import numpy as np
import pybullet as p
import pybullet_data
import pytest

from bullet_setimpact.bullet.box_geometry import box_distance
from bullet_setimpact.bullet.contacts import ContactFinder, pair_key
from bullet_setimpact.bullet.resting.corner_watch import MAX_CORNERS, CornerWatch

from .drop_worlds import GROUNDS, load_ground

#: The simulator's default contact tolerance [m].
TOLERANCE = 1e-4
#: Half the edge of ``cube_small.urdf`` [m].
HALF = 0.025
#: Where the box ground's top face ends (``ground_box.urdf``: 40 m wide, centred at the origin) [m].
GROUND_EDGE = 20.0


def _place(client: int, cube: int, orientation: np.ndarray, lowest: float, x: float) -> None:
    """The cube with ``orientation`` and its lowest corner ``lowest`` above z = 0, at ``x``;
    Bullet's manifold brought up to date for that pose."""
    rotation = np.array(p.getMatrixFromQuaternion(orientation.tolist())).reshape(3, 3)
    corners = np.array([[sx, sy, sz] for sx in (-HALF, HALF) for sy in (-HALF, HALF) for sz in (-HALF, HALF)]) @ rotation.T
    position = [x, 0.0, lowest - corners[:, 2].min()]
    p.resetBasePositionAndOrientation(cube, position, orientation.tolist(), physicsClientId=client)
    p.performCollisionDetection(physicsClientId=client)


def _cube_on(client: int, ground: str, cube_first: bool) -> tuple[int, ContactFinder, tuple]:
    """``cube_small`` and ``ground`` loaded in either order: the cube, a finder and their link pair."""
    if cube_first:
        cube = p.loadURDF(os.path.join(pybullet_data.getDataPath(), "cube_small.urdf"), [0.0, 0.0, 1.0], physicsClientId=client)
        ground_body = load_ground(client, ground)
    else:
        ground_body = load_ground(client, ground)
        cube = p.loadURDF(os.path.join(pybullet_data.getDataPath(), "cube_small.urdf"), [0.0, 0.0, 1.0], physicsClientId=client)
    return cube, ContactFinder(client, [cube], TOLERANCE), pair_key(((ground_body, -1), (cube, -1)))


@pytest.mark.parametrize("cube_first", [False, True])
@pytest.mark.parametrize("ground", GROUNDS)
def test_the_watch_agrees_with_the_evaluation_wherever_it_answers(client: int, ground: str, cube_first: bool) -> None:
    """A 5 cm cube (``cube_small``) at random orientations with its lowest corner within
    ``[-2 tol, 2 tol]`` of the ground, in the middle of the ground and (box ground) a few
    millimetres from its edge.  Where the evaluation finds 1 to 3 of the cube's corners and nothing
    else, a watch is started; the cube is then moved by up to ``2 tol`` and turned by up to
    4 mrad (some corners cross the tolerance, Bullet's manifold points lag behind the corners by
    the move) ten times, and at each pose the watch's answer, unless None, must equal
    ``corner_pair_features == corners``.  Both answers must occur many times (the check can fail
    either way), and the watch must answer at least 3 times in 4 (None hands the pair to the
    evaluation: correct, but the watch would save nothing).  Loaded first, the cube is link A
    of the pair (its corners are the contact points on A), else the ground is."""
    cube, finder, pair = _cube_on(client, ground, cube_first)
    rng = np.random.default_rng(0)
    answers = {True: 0, False: 0, None: 0}
    for trial in range(300):
        x = GROUND_EDGE - rng.uniform(0.0, 0.01) if ground == "box" and trial % 3 == 0 else rng.uniform(-1.0, 1.0)
        orientation = rng.normal(size=4)
        _place(client, cube, orientation / np.linalg.norm(orientation), rng.uniform(-2.0, 2.0) * TOLERANCE, x)
        corners = finder.corner_pair_features(pair)
        if not 1 <= len(corners) <= MAX_CORNERS or any(feature[0] != "vertex" for feature in corners):
            continue
        watch = CornerWatch.start(finder, pair, corners, {cube}, 0.0)
        assert watch is not None, "a cube touching the ground by corners must be watched"
        position, start = (np.array(part) for part in p.getBasePositionAndOrientation(cube, physicsClientId=client))
        for _ in range(10):
            turn = rng.normal(size=3) * 2e-3
            moved = np.array(p.getQuaternionFromEuler(turn.tolist()))
            orientation = np.array(p.multiplyTransforms([0, 0, 0], moved.tolist(), [0, 0, 0], start.tolist())[1])
            p.resetBasePositionAndOrientation(
                cube, (position + rng.uniform(-2.0, 2.0, size=3) * TOLERANCE).tolist(), orientation.tolist(), physicsClientId=client
            )
            p.performCollisionDetection(physicsClientId=client)
            verdict = watch.holds(0.0, p.getContactPoints(physicsClientId=client))
            answers[verdict] += 1
            if verdict is not None:
                assert verdict == (finder.corner_pair_features(pair) == corners), f"trial {trial}: the watch said {verdict}"
    assert answers[True] >= 100 and answers[False] >= 100, answers
    assert answers[None] <= sum(answers.values()) / 4, answers


@pytest.mark.parametrize("cube_first", [False, True])
@pytest.mark.parametrize("ground", GROUNDS)
def test_a_creeping_cube_is_checked_by_its_touching_corners_alone_and_the_watch_still_agrees(
    client: int, ground: str, cube_first: bool
) -> None:
    """The watch places only the touching corners while no other corner can have moved into the
    tolerance since all gaps were last computed (``corner_motion`` below the least ``gap - tol``
    of those then) and the touching corners' own gaps stay inside it.  A cube touching by 1 to 3 corners creeps: 40 steps of a random walk,
    each moving it by up to ``tol / 10`` and turning it by up to 0.05 mrad (about a resting
    foot's creep) and drifting up or down by ``tol / 20``, so that over the walk corners do
    cross the tolerance.  Every answer the watch gives must be the evaluation's, the shortcut
    must be taken in at least a third of the checks (else it saves nothing), and at least 40
    walks must end with False (a corner crossed: the shortcut must not hide it).  Each of the
    four cases gave 3466 True, 64 False, 0 None and 3343 shortcuts when written (3160 while the
    touching corners' own distance to the tolerance also bounded the shortcut)."""
    cube, finder, pair = _cube_on(client, ground, cube_first)
    rng = np.random.default_rng(1)
    answers = {True: 0, False: 0, None: 0}
    shortcuts = 0
    for trial in range(120):
        orientation = rng.normal(size=4)
        _place(client, cube, orientation / np.linalg.norm(orientation), rng.uniform(-1.0, 1.0) * TOLERANCE, rng.uniform(-1.0, 1.0))
        corners = finder.corner_pair_features(pair)
        if not 1 <= len(corners) <= MAX_CORNERS or any(feature[0] != "vertex" for feature in corners):
            continue
        watch = CornerWatch.start(finder, pair, corners, {cube}, 0.0)
        assert watch is not None
        drift = np.array([0.0, 0.0, rng.choice([-1.0, 1.0]) * TOLERANCE / 20.0])
        for _ in range(40):
            position, start = p.getBasePositionAndOrientation(cube, physicsClientId=client)
            moved = p.getQuaternionFromEuler((rng.uniform(-1.0, 1.0, size=3) * 5e-5).tolist())
            orientation = p.multiplyTransforms([0, 0, 0], moved, [0, 0, 0], start)[1]
            shifted = (np.array(position) + drift + rng.uniform(-1.0, 1.0, size=3) * TOLERANCE / 10.0).tolist()
            p.resetBasePositionAndOrientation(cube, shifted, orientation, physicsClientId=client)
            p.performCollisionDetection(physicsClientId=client)
            verdict = watch.holds(0.0, p.getContactPoints(physicsClientId=client))
            answers[verdict] += 1
            if verdict is not None:
                assert verdict == (finder.corner_pair_features(pair) == corners), f"trial {trial}: the watch said {verdict}"
            if verdict is not True:
                break
        shortcuts += watch.shortcuts
    assert shortcuts >= sum(answers.values()) / 3, (shortcuts, answers)
    assert answers[False] >= 40, answers


@pytest.mark.parametrize("ground", GROUNDS)
def test_a_corner_sliding_inside_the_tolerance_keeps_the_shortcut_until_it_lifts_off(client: int, ground: str) -> None:
    """A cube balanced on one corner (its diagonal vertical, tilted by a few mrad) slides along the
    ground, 0.5 tol a check for 200 checks (1 cm in all), its touching corner kept within
    ``[-tol / 2, tol / 2]`` of the ground: the corner stays in contact, and the next lowest corners
    are ``2 HALF / sqrt(3)`` = 2.9 cm up, farther than the slide.  So after the first check (which
    places all corners) every check must take the shortcut, placing only the touching corner: the
    shortcut is bounded by the other corners' 2.9 cm, not by the touching corner's 0.05-0.15 mm
    to the tolerance, which the slide crosses within three checks.  Each answer must be True and the
    evaluation's.  Lifted to ``2 tol``, the corner leaves the tolerance: the watch must say False
    (its own gap, checked each time, ends the shortcut)."""
    cube, finder, pair = _cube_on(client, ground, cube_first=False)
    diagonal = np.ones(3) / np.sqrt(3.0)  # the corner (+, +, +) turned to point straight down
    axis = np.cross(diagonal, [0.0, 0.0, -1.0])
    angle = np.arccos(-diagonal[2])
    down = np.append(axis / np.linalg.norm(axis) * np.sin(angle / 2.0), np.cos(angle / 2.0))
    tilt = np.array(p.getQuaternionFromEuler([3e-3, -2e-3, 1e-3]))
    orientation = np.array(p.multiplyTransforms([0, 0, 0], tilt.tolist(), [0, 0, 0], down.tolist())[1])
    rng = np.random.default_rng(2)
    _place(client, cube, orientation, 0.0, 0.0)
    corners = finder.corner_pair_features(pair)
    assert len(corners) == 1, corners
    watch = CornerWatch.start(finder, pair, corners, {cube}, 0.0)
    assert watch is not None
    checks = 200
    for check in range(checks):
        _place(client, cube, orientation, rng.uniform(-0.5, 0.5) * TOLERANCE, 0.5 * TOLERANCE * (check + 1))
        assert watch.holds(0.0, p.getContactPoints(physicsClientId=client)) is True, f"check {check}"
        assert finder.corner_pair_features(pair) == corners
    assert watch.shortcuts == checks - 1
    _place(client, cube, orientation, 2.0 * TOLERANCE, 0.5 * TOLERANCE * (checks + 1))
    assert watch.holds(0.0, p.getContactPoints(physicsClientId=client)) is False
    assert finder.corner_pair_features(pair) != corners


def test_the_static_corners_account_ends_the_watch(client: int) -> None:
    """The watch holds only while the most any link has spent stays below the static box's own
    corners' distance to the moving link (less the tolerance): the cube resting on a corner
    0.5 m from the box ground's rim, whose nearest corners are at ``sqrt(0.5^2 + 20^2 + ...)``;
    with 0.5 m less ``tol`` as a lower bound, spending 100 m must end it (False), spending 0.4 m
    must not."""
    ground_body = load_ground(client, "box")
    cube = p.loadURDF(os.path.join(pybullet_data.getDataPath(), "cube_small.urdf"), [0.0, 0.0, 1.0], physicsClientId=client)
    finder = ContactFinder(client, [cube], TOLERANCE)
    pair = pair_key(((ground_body, -1), (cube, -1)))
    corner_down = np.array(p.getQuaternionFromEuler([0.6, 0.7, 0.0]))
    _place(client, cube, corner_down, -TOLERANCE / 2.0, GROUND_EDGE - 0.5)
    corners = finder.corner_pair_features(pair)
    assert len(corners) == 1
    watch = CornerWatch.start(finder, pair, corners, {cube}, 0.0)
    assert watch is not None
    assert watch.holds(0.4, p.getContactPoints(physicsClientId=client)) is True
    assert watch.holds(100.0, p.getContactPoints(physicsClientId=client)) is False


def test_the_watch_places_a_corner_and_finds_its_normal_as_the_evaluation_does(client: int) -> None:
    """A watch places its touching corners and finds their normals on Python floats, unrolled,
    every step; the evaluation uses ``box_distance`` on arrays.  Against a box turned by random
    rotations (the watch's ``_axes``: the box ground's, replaced), for 2,000 points near and
    inside its faces, edges and corners: the gap is ``box_distance``'s, and wherever the watch
    finds a normal it is ``box_distance``'s (to 1e-12).  Where the deepest axis is clear by 1e-6 m
    (no tie the margin could flip), the point is off the faces' planes and inside by 1e-6 m,
    the watch must find one: a watch that always said "cannot tell" would pass the first check."""
    ground_body = load_ground(client, "box")
    cube = p.loadURDF(os.path.join(pybullet_data.getDataPath(), "cube_small.urdf"), [0.0, 0.0, 1.0], physicsClientId=client)
    finder = ContactFinder(client, [cube], TOLERANCE)
    pair = pair_key(((ground_body, -1), (cube, -1)))
    _place(client, cube, np.array(p.getQuaternionFromEuler([0.6, 0.7, 0.0])), -TOLERANCE / 2.0, 0.0)
    watch = CornerWatch.start(finder, pair, finder.corner_pair_features(pair), {cube}, 0.0)
    assert watch is not None
    rng = np.random.default_rng(7)
    half = np.array([0.3, 0.05, 0.12])
    watch._half = half.tolist()
    answered = required = 0
    for _ in range(2000):
        frame = np.linalg.qr(rng.standard_normal((3, 3)))[0]
        watch._axes, watch._centre = frame.T.tolist(), rng.uniform(-1.0, 1.0, 3).tolist()
        local = half * rng.choice([-1.0, 1.0], 3) * rng.choice([rng.uniform(0.0, 1.2), 1.0 - rng.uniform(0.0, 1e-3)], 3)
        world = frame @ local + np.array(watch._centre)
        expected_gap, expected_normal = (row[0] for row in box_distance(local[None, :], half, frame))
        _, placed_local, gap = watch._place(world.tolist(), np.eye(3).tolist(), [0.0, 0.0, 0.0])
        np.testing.assert_allclose(placed_local, local, atol=1e-12)
        assert gap == pytest.approx(float(expected_gap), abs=1e-12)
        normal = watch._normal(placed_local, gap)
        excess = np.sort(np.abs(local) - half)
        if gap < -1e-6 and excess[2] - excess[1] > 1e-6 and np.abs(local).min() > 1e-6:
            required += 1
            assert normal is not None
        if normal is not None:
            answered += 1
            np.testing.assert_allclose(normal, expected_normal, atol=1e-12)
    assert required > 200 and answered >= required

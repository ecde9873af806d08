"""Box into wall: a tilted box sliding on corner A hits the wall with corner B (journal Fig. 11).

``urdf/box_wall_planar.urdf`` (unit box, 1 kg, on x and z sliders with pitch; coordinates
``planar.box_wall``'s ``q``) starts at the journal's impact state: turned 10 deg clockwise,
corner A on the box ground, corner B touching the wall's face x = 0, moving at ``speed``
along +x, so A slides and B collides.  The impact is resolved at t = 0 with the journal's
law (h = 2 N s, N = 5, mu = 1 at both); the box then falls back onto the floor or slides
along the wall under gravity.

Measures: contacts A (the box's lowest corner, on the floor) and B (its rightmost corner,
on the wall): their post-impact normal and tangential velocities (simultaneous: rest;
B-then-A: A still sliding and B lifting; the set-valued law adds blends, A sliding faster
and B sliding), and the box's final resting pose (x, y, theta) after ``duration``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pybullet as p

from bullet_setimpact import planar
from bullet_setimpact.bullet.contacts import Contact
from bullet_setimpact.bullet.examples import load_planar_example
from bullet_setimpact.montecarlo.labels import in_link_frame
from bullet_setimpact.montecarlo.scenario import Scenario, planar_scenario, require

NAME = "box_wall"
#: Link of the box in the planar URDF (after the x and z sliders).
BOX_LINK = 2

DEFAULTS: dict[str, Any] = {
    "speed": 1.0,  # box velocity along +x before the impact [m/s]
    "duration": 1.0,  # simulated time [s]
    "time_step": 1.0 / 240.0,  # Bullet's fixed time step [s]
}


def _corner(client: int, body: int, point: np.ndarray) -> tuple[int, int]:
    """Signs of the box corner nearest ``point``, in the box frame (x, z)."""
    local = in_link_frame(client, body, BOX_LINK, point)
    return int(np.sign(local[0]) or 1), int(np.sign(local[2]) or 1)


def corner_label(client: int, box: int, wall: int, corners: dict[tuple[int, int], str], contact: Contact) -> str:
    """``"A"`` for corner A on the floor, ``"B"`` for corner B on the wall, else ``"<surface>:<corner>"``."""
    _, point, other = contact.side(box)
    surface = "wall" if other == wall else "floor"
    corner = _corner(client, box, point)
    letter = corners.get(corner, "")
    if (letter, surface) in (("A", "floor"), ("B", "wall")):
        return letter
    return f"{surface}:corner({corner[0]:+d},{corner[1]:+d})"


def build(client: int, **params: Any) -> Scenario:
    """The box at the journal's impact configuration moving into the wall, gravity on."""
    require(params, "speed", params["speed"] > 0.0, "> 0 m/s (towards the wall)")
    example = planar.box_wall(speed=params["speed"])
    world = load_planar_example(client, NAME, configuration=example.configuration, velocity=example.v_minus)
    (box,) = world.bodies
    # A is the lowest corner, B the rightmost one, at the impact configuration (planar.box_wall)
    points = {}
    for sx in (-1, 1):
        for sz in (-1, 1):
            origin, orientation = p.getLinkState(box, BOX_LINK, computeForwardKinematics=True, physicsClientId=client)[:2]
            points[(sx, sz)] = np.array(origin) + np.array(p.getMatrixFromQuaternion(orientation)).reshape(3, 3) @ (
                0.5 * np.array([sx, 0.0, sz])
            )
    corners = {min(points, key=lambda k: points[k][2]): "A", max(points, key=lambda k: points[k][0]): "B"}
    return planar_scenario(
        NAME, client, world, ["box"], params["duration"], __doc__, lambda contact: corner_label(client, box, world.wall, corners, contact)
    )


if __name__ == "__main__":
    from bullet_setimpact.cli import run_script

    run_script(__file__)

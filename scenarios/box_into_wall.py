"""Box into wall, 3D: a free tilted cube sliding on its lower edge A hits the wall with edge B.

The free 3D twin of journal Fig. 11: ``urdf/sliding_box.urdf`` (a free unit cube, 1 kg,
I = 1/6) starts at the journal's impact state, turned ``angle_deg`` clockwise in the x-z
plane (about +y), its lowest edge A on the box ground and its rightmost edge B touching
``urdf/wall_box.urdf``'s face x = 0, moving at ``speed`` along +x.  Each edge is two
corner contacts (y = -0.5 and +0.5), so the impact has four contacts, resolved at t = 0.

The law is ``RouthImpact("auto", 20)``: the journal's h = 2 N s belongs to its planar
model; ``"auto"`` scales h to the impulse that stops a single contact alone, and N = 20
leaves room for four contacts with eight friction directions each.

Measures: the corners of edge A on the floor (``A-``, ``A+``: sign of their side along y)
and of edge B on the wall (``B-``, ``B+``): their post-impact normal and tangential
velocities (rest, A sliding on while B lifts, blends; out-of-plane spin when the two
corners of an edge separate differently), and the box's final resting pose.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pybullet as p

from bullet_setimpact import RouthImpact
from bullet_setimpact.bullet.contacts import Contact
from bullet_setimpact.bullet.examples import load_free_body, load_static
from bullet_setimpact.montecarlo.labels import in_link_frame
from bullet_setimpact.montecarlo.scenario import Scenario, describe, require

NAME = "box_into_wall"
HALF = 0.5

DEFAULTS: dict[str, Any] = {
    "speed": 1.0,  # box velocity along +x before the impact [m/s]
    "angle_deg": 10.0,  # clockwise turn in the x-z plane [deg]
    "duration": 1.0,  # simulated time [s]
    "time_step": 1.0 / 240.0,  # Bullet's fixed time step [s]
}


def corner_label(client: int, box: int, wall: int, edges: dict[tuple[int, int], str], contact: Contact) -> str:
    """``A-``/``A+`` for edge A's corners on the floor, ``B-``/``B+`` for edge B's on the wall,
    else ``"<surface>:corner(sx,sy,sz)"`` (box-frame signs)."""
    _, point, other = contact.side(box)
    signs = tuple(int(s) for s in np.where(in_link_frame(client, box, -1, point) < 0.0, -1, 1))
    surface = "wall" if other == wall else "floor"
    letter = edges.get((signs[0], signs[2]), "")
    if (letter, surface) in (("A", "floor"), ("B", "wall")):
        return f"{letter}{'-' if signs[1] < 0 else '+'}"
    return f"{surface}:corner({signs[0]:+d},{signs[1]:+d},{signs[2]:+d})"


def build(client: int, **params: Any) -> Scenario:
    """The cube touching floor and wall, moving into the wall, gravity on."""
    require(params, "speed", params["speed"] > 0.0, "> 0 m/s (towards the wall)")
    require(params, "angle_deg", 0.0 < params["angle_deg"] < 45.0, "in (0, 45) deg")
    ground = load_static(client)
    wall = load_static(client, "wall_box.urdf")
    orientation = p.getQuaternionFromAxisAngle([0.0, 1.0, 0.0], np.deg2rad(params["angle_deg"]))
    rotation = np.array(p.getMatrixFromQuaternion(orientation)).reshape(3, 3)
    edges_local = {(sx, sz): rotation @ np.array([sx, 0.0, sz]) * HALF for sx in (-1, 1) for sz in (-1, 1)}
    lowest = min(edges_local, key=lambda k: edges_local[k][2])
    rightmost = max(edges_local, key=lambda k: edges_local[k][0])
    centre = [-edges_local[rightmost][0], 0.0, -edges_local[lowest][2]]  # B on x = 0, A on z = 0
    box = load_free_body(client, "sliding_box.urdf", centre, orientation)
    p.resetBaseVelocity(box, [params["speed"], 0.0, 0.0], [0.0, 0.0, 0.0], physicsClientId=client)
    edges = {lowest: "A", rightmost: "B"}
    return Scenario(
        name=NAME,
        client=client,
        bodies={"box": box},
        duration=params["duration"],
        law=RouthImpact("auto", 20),
        **describe(__doc__),
        label_contact=lambda contact: corner_label(client, box, wall, edges, contact),
        extra={"ground": ground, "wall": wall},
    )


if __name__ == "__main__":
    from bullet_setimpact.cli import run_script

    run_script(__file__)

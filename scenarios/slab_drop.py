"""Slab drop: the rocking block's free 3D twin lands flat on four bottom corners at once.

``urdf/rocking_slab.urdf`` (a free 1 m x 0.5 m x 2 m box, 1 kg; its x-z motion is the planar
block's) is released at rest with its lowest corner ``height`` above the box ground, turned
by ``tilt`` about the world -y axis (the planar block's theta: positive lifts the +x side).
At ``tilt = 0`` it lands flat at ``sqrt(2 g height)`` on all four bottom corners at once,
the spatial version of journal Fig. 9; Bullet's box-box manifold and the corner completion
give the four points together.

The law is ``RouthImpact("auto", 20)``: the journal gives no h for spatial contacts, and
``"auto"`` scales each event's h to the impulse that stops a single contact alone, so an
impact resolves in a few steps whatever the drop height; N = 20 (twice the planar block's)
leaves room for four contacts with eight friction directions each.

Measures: the four bottom corners (labelled ``A-``, ``A+``, ``B-``, ``B+``: letter A/B for
the side along the slab's x, as the planar block's left/right corners, sign for its side
along y): their post-impact normal and tangential velocities (rest, pivots on an edge or a
corner, out-of-plane rocking), and the slab's final resting pose (position, orientation).
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

NAME = "slab_drop"
HALF_EXTENTS = np.array([0.5, 0.25, 1.0])

DEFAULTS: dict[str, Any] = {
    "height": 0.01,  # drop height of the lowest corner [m]
    "tilt": 0.0,  # initial turn about the world -y axis [rad] (positive lifts the +x side)
    "duration": 1.0,  # simulated time [s]
    "time_step": 1.0 / 240.0,  # Bullet's fixed time step [s]
}


def corner_label(client: int, slab: int, contact: Contact) -> str:
    """``A-``/``A+``/``B-``/``B+`` for the bottom corners (x side letter, y side sign), ``top...`` above."""
    local = in_link_frame(client, slab, -1, contact.side(slab)[1])
    label = ("A" if local[0] < 0.0 else "B") + ("-" if local[1] < 0.0 else "+")
    return label if local[2] < 0.0 else f"top{label}"


def build(client: int, **params: Any) -> Scenario:
    """The slab at rest, lowest corner ``height`` above the box ground, gravity on."""
    require(params, "height", params["height"] >= 0.0, ">= 0 m")
    require(params, "tilt", abs(params["tilt"]) < np.pi / 4, "a small angle (|tilt| < pi/4 rad)")
    ground = load_static(client)
    orientation = p.getQuaternionFromAxisAngle([0.0, -1.0, 0.0], params["tilt"])
    rotation = np.array(p.getMatrixFromQuaternion(orientation)).reshape(3, 3)
    corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * HALF_EXTENTS
    centre_height = params["height"] - (corners @ rotation.T)[:, 2].min()
    slab = load_free_body(client, "rocking_slab.urdf", [0.0, 0.0, centre_height], orientation)
    return Scenario(
        name=NAME,
        client=client,
        bodies={"slab": slab},
        duration=params["duration"],
        law=RouthImpact("auto", 20),
        **describe(__doc__),
        label_contact=lambda contact: corner_label(client, slab, contact),
        extra={"ground": ground},
    )


if __name__ == "__main__":
    from bullet_setimpact.cli import run_script

    run_script(__file__)

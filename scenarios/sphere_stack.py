"""Sphere stack: a free sphere falls onto two resting spheres, five contacts at once (3D disk stack).

The free 3D twin of journal Fig. 14: three ``urdf/stack_sphere.urdf`` spheres (R = 1 m,
1 kg, solid: I = 0.4) centred at (0, 0, 1), (2, 0, 1) and (1, 0, 1 + sqrt 3): the bottom
two rest on the box ground touching each other, the top one sits ``gap`` above its contact
with both and falls at ``speed`` (default: touching, the journal's impact state, resolved
at t = 0).  Every contact has mu = sqrt 3 (the ground's friction is set to 3^(1/4) to match
the spheres').  Nothing holds the spheres in the x-z plane: out-of-plane impulses may
appear, and the top sphere's perch on the two is unstable along y.

The law is ``RouthImpact("auto", 20)``: the journal's h = 1 N s belongs to its planar
disks; ``"auto"`` scales h to the impulse that stops a single contact alone, and N = 20
(twice the journal's) leaves room for five spatial contacts.

Measures: contacts A (left sphere-ground), B (right sphere-ground), C (top-left),
D (top-right) and E (left-right): their post-impact normal and tangential velocities (rest,
or the tower coming apart: a bottom sphere rolling away or lifting), the kinetic energy at
every event, and the spheres' final positions.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pybullet as p

from bullet_setimpact import RouthImpact
from bullet_setimpact.bullet.examples import load_free_body, load_static
from bullet_setimpact.montecarlo.labels import DISK_STACK_LETTERS, pair_label
from bullet_setimpact.montecarlo.scenario import Scenario, describe, require

NAME = "sphere_stack"
RADIUS = 1.0

DEFAULTS: dict[str, Any] = {
    "speed": 1.0,  # top sphere's falling speed at the start [m/s]
    "gap": 0.0,  # extra height of the top sphere above contact [m]
    "duration": 1.0,  # simulated time [s]
    "time_step": 1.0 / 240.0,  # Bullet's fixed time step [s]
}


def build(client: int, **params: Any) -> Scenario:
    """The three spheres, the top one ``gap`` above contact falling at ``speed``, gravity on."""
    require(params, "gap", params["gap"] >= 0.0, ">= 0 m")
    require(params, "speed", params["speed"] > 0.0 or (params["speed"] == 0.0 and params["gap"] > 0.0), "> 0 m/s (or 0 with gap > 0)")
    ground = load_static(client)
    p.changeDynamics(ground, -1, lateralFriction=3**0.25, physicsClientId=client)  # x 3^(1/4) = sqrt 3
    centres = {
        "left": [0.0, 0.0, RADIUS],
        "right": [2.0 * RADIUS, 0.0, RADIUS],
        "top": [RADIUS, 0.0, RADIUS * (1.0 + np.sqrt(3.0)) + params["gap"]],
    }
    bodies = {name: load_free_body(client, "stack_sphere.urdf", centre) for name, centre in centres.items()}
    p.resetBaseVelocity(bodies["top"], [0.0, 0.0, -params["speed"]], [0.0, 0.0, 0.0], physicsClientId=client)
    names = {body: name for name, body in bodies.items()} | {ground: "ground"}
    return Scenario(
        name=NAME,
        client=client,
        bodies=bodies,
        duration=params["duration"],
        law=RouthImpact("auto", 20),
        **describe(__doc__),
        label_contact=lambda contact: pair_label(names, DISK_STACK_LETTERS, contact),
        extra={"ground": ground},
    )


if __name__ == "__main__":
    from bullet_setimpact.cli import run_script

    run_script(__file__)

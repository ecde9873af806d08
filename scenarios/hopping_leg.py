"""Hopping leg: a passive two-joint leg robot whose URDF gives its foot restitution lands and hops.

``urdf/hopping_leg.urdf``: a torso (3 kg) on a revolute hip, thigh (0.5 kg), revolute knee,
shin (0.3 kg) and a spherical foot (0.1 kg, ``<contact><restitution value="0.6"/>``), released
standing straight with its foot ``height`` above the box ground, whose restitution is set to
``ground_restitution`` with ``changeDynamics`` (Bullet combines the two by their product).  The
joints are passive (their default velocity motors off).  Standing straight, every centre of
mass and both joint axes lie on the vertical through the foot, so the foot's vertical impulse
turns no joint and no body: the robot lands like a point mass, nothing slides, and Stronge's
coefficient gives every velocity ``v+ = -e v-`` at the first impact (``e = 0.6`` by default).

The law is ``RouthImpact("auto", 50)``: each event's h is the impulse that stops the contact
alone.

Measures: the foot's contact with the ground (labelled "foot"): its post-impact normal velocity
at every event, the impact times, and the torso's final pose after ``duration``.
"""

from __future__ import annotations

from typing import Any

import pybullet as p

from bullet_setimpact import RouthImpact
from bullet_setimpact.bullet.examples import urdf_path
from bullet_setimpact.montecarlo.labels import link_label
from bullet_setimpact.montecarlo.scenario import Scenario, describe, elastic_ground, require

NAME = "hopping_leg"
#: Height of the torso's origin above the foot's lowest point when standing straight [m].
LEG_LENGTH = 0.68

DEFAULTS: dict[str, Any] = {
    "height": 0.3,  # drop height of the foot's lowest point [m]
    "ground_restitution": 1.0,  # the ground's restitution (combined with the foot's 0.6 by product)
    "duration": 1.0,  # simulated time [s]
    "time_step": 1.0 / 240.0,  # Bullet's fixed time step [s]
}


def build(client: int, **params: Any) -> Scenario:
    """The leg standing straight ``height`` above the ground, joints passive, the ground's restitution set."""
    require(params, "height", params["height"] > 0.0, "> 0 m")
    ground = elastic_ground(client, params)
    leg = p.loadURDF(
        urdf_path("hopping_leg.urdf"), [0.0, 0.0, LEG_LENGTH + params["height"]], flags=p.URDF_USE_INERTIA_FROM_FILE, physicsClientId=client
    )
    for joint in range(p.getNumJoints(leg, physicsClientId=client)):
        p.setJointMotorControl2(leg, joint, p.VELOCITY_CONTROL, force=0.0, physicsClientId=client)
        p.changeDynamics(leg, joint, linearDamping=0.0, angularDamping=0.0, physicsClientId=client)
    p.changeDynamics(leg, -1, linearDamping=0.0, angularDamping=0.0, physicsClientId=client)
    return Scenario(
        name=NAME,
        client=client,
        bodies={"leg": leg},
        duration=params["duration"],
        law=RouthImpact("auto", 50),
        **describe(__doc__),
        label_contact=lambda contact: link_label(client, leg, contact, base="torso"),
        extra={"ground": ground},
    )


if __name__ == "__main__":
    from bullet_setimpact.cli import run_script

    run_script(__file__)

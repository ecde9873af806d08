"""RAMone footfall: the planar biped's leading foot A strikes while the trailing foot B rests (journal Fig. 13).

``urdf/ramone_planar.urdf`` (trunk on x and z sliders with pitch, two hip-knee legs with
foot spheres; coordinates ``planar.ramone``'s ``q``, data of Remy 2017) starts at the
journal's impact state: trunk pitch 16 deg, hips -70 / +70 deg, knees -2 / -92.48 deg, the
trunk turning at ``pitch_rate`` with the trunk velocity that keeps B at rest and joint
rates zero.  The impact is resolved at t = 0 with the journal's law (h = 1 N s, N = 10;
the journal's mu = 1e5 arrives clamped at Bullet's combined-friction cap of 10).  The robot
is unactuated (motors off, as in the journal's model) and collapses afterwards; only the
feet collide, so only the first impacts are meaningful.

Measures: contacts A (leading foot, link ``shank_leading``) and B (trailing foot, link
``shank_trailing``) against the ground: their post-impact normal and tangential velocities
(A sticks throughout; B sticks, slides or lifts, with intermediate and scaled-down
outcomes), and the joint state after ``duration``.
"""

from __future__ import annotations

from typing import Any

import pybullet as p

from bullet_setimpact import RouthImpact, planar
from bullet_setimpact.bullet.contacts import Contact
from bullet_setimpact.bullet.examples import load_planar_example
from bullet_setimpact.scenario import Scenario, parameters

NAME = "ramone"
GRAVITY = 9.81
#: The journal's contact letters by the robot's link names (the feet are on the shanks).
FEET = {"shank_leading": "A", "shank_trailing": "B"}

DEFAULTS: dict[str, Any] = {
    "pitch_rate": 1.0,  # trunk pitch rate before the impact [rad/s]
    "duration": 0.3,  # simulated time [s]: the unactuated robot collapses soon after
    "time_step": 1.0 / 240.0,  # Bullet's fixed time step [s]
}


def foot_label(client: int, body: int, contact: Contact) -> str:
    """``"A"``/``"B"`` by the robot's link in contact (other links by name)."""
    link = contact.link_a if contact.body_a == body else contact.link_b
    name = p.getJointInfo(body, link, physicsClientId=client)[12].decode() if link >= 0 else "base"
    return FEET.get(name, name)


def build(client: int, **params: Any) -> Scenario:
    """RAMone at the journal's impact configuration and velocity, gravity on."""
    params = parameters(NAME, params)
    if params["pitch_rate"] <= 0.0:
        raise ValueError(f"parameter 'pitch_rate' must be > 0 (A must fall), got {params['pitch_rate']!r}")
    p.setGravity(0.0, 0.0, -GRAVITY, physicsClientId=client)
    p.setTimeStep(params["time_step"], physicsClientId=client)
    example = planar.ramone(pitch_rate=params["pitch_rate"])
    world = load_planar_example(client, NAME, configuration=example.configuration, velocity=example.v_minus)
    (robot,) = world.bodies
    return Scenario(
        name=NAME,
        client=client,
        bodies={"ramone": robot},
        duration=params["duration"],
        law=RouthImpact(example.step, example.max_steps),
        description=(__doc__ or "").strip().splitlines()[0],
        measures=" ".join((__doc__ or "").split("Measures:", 1)[1].split("\n\n", 1)[0].split()),
        label_contact=lambda contact: foot_label(client, robot, contact),
        extra={"ground": world.ground, "example": example},
    )


if __name__ == "__main__":
    from bullet_setimpact.scenario import run_standalone

    run_standalone("ramone")

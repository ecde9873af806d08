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

from bullet_setimpact import planar
from bullet_setimpact.bullet.examples import load_planar_example
from bullet_setimpact.montecarlo.labels import link_label
from bullet_setimpact.montecarlo.scenario import Scenario, planar_scenario, require

NAME = "ramone"
#: The journal's contact letters by the robot's link names (the feet are on the shanks).
FEET = {"shank_leading": "A", "shank_trailing": "B"}

DEFAULTS: dict[str, Any] = {
    "pitch_rate": 1.0,  # trunk pitch rate before the impact [rad/s]
    "duration": 0.3,  # simulated time [s]: the unactuated robot collapses soon after
    "time_step": 1.0 / 240.0,  # Bullet's fixed time step [s]
}


def build(client: int, **params: Any) -> Scenario:
    """RAMone at the journal's impact configuration and velocity, gravity on."""
    require(params, "pitch_rate", params["pitch_rate"] > 0.0, "> 0 rad/s (A must fall)")
    example = planar.ramone(pitch_rate=params["pitch_rate"])
    world = load_planar_example(client, NAME, configuration=example.configuration, velocity=example.v_minus)
    (robot,) = world.bodies
    return planar_scenario(
        NAME, client, world, ["ramone"], params["duration"], __doc__, lambda contact: link_label(client, robot, contact, FEET)
    )


if __name__ == "__main__":
    from bullet_setimpact.cli import run_script

    run_script(__file__)

"""Compass-gait footfall: the leading foot A strikes while the trailing foot B rests (journal Fig. 10).

``urdf/compass_gait_planar.urdf`` (hip on x and z sliders, two 1 m legs with a 1 kg point
mass 0.5 m from the hip; coordinates ``planar.compass_gait``'s ``q``) starts at the
journal's impact state: legs at -78 / +78 deg from the vertical, both turning at
``leg_rate`` with the hip velocity that keeps B at rest, so A falls at
``2 sin(78 deg) leg_rate`` (0.4891 m/s at the default 0.25 rad/s).  The impact is resolved
at t = 0 with the journal's law (h = 0.25 N s, N = 5, mu = 5); the walker is unactuated
(motors off, as in the journal's model) and afterwards falls under gravity.

Measures: contacts A (leading foot, link ``leg_leading``) and B (trailing foot, link
``leg_trailing``) against the ground: their post-impact normal and tangential velocities
(Anitescu-Potra: A sticks, B slides, sticks or lifts; the set-valued law adds intermediate
outcomes and A sliding or lifting), and the legs' final joint state after ``duration``.
"""

from __future__ import annotations

from typing import Any

from bullet_setimpact import planar
from bullet_setimpact.bullet.examples import load_planar_example
from bullet_setimpact.montecarlo.labels import link_label
from bullet_setimpact.montecarlo.scenario import Scenario, planar_scenario, require

NAME = "compass_gait"
#: The journal's contact letters by the walker's link names.
FEET = {"leg_leading": "A", "leg_trailing": "B"}

DEFAULTS: dict[str, Any] = {
    "leg_rate": 0.25,  # both legs' angular rate before the impact [rad/s]
    "duration": 0.5,  # simulated time [s]
    "time_step": 1.0 / 240.0,  # Bullet's fixed time step [s]
}


def build(client: int, **params: Any) -> Scenario:
    """The walker at the journal's impact configuration and velocity, gravity on."""
    require(params, "leg_rate", params["leg_rate"] > 0.0, "> 0 rad/s (A must fall)")
    example = planar.compass_gait(leg_rate=params["leg_rate"])
    world = load_planar_example(client, NAME, configuration=example.configuration, velocity=example.v_minus)
    (walker,) = world.bodies
    return planar_scenario(
        NAME, client, world, ["walker"], params["duration"], __doc__, lambda contact: link_label(client, walker, contact, FEET, base="hip")
    )


if __name__ == "__main__":
    from bullet_setimpact.cli import run_script

    run_script(__file__)

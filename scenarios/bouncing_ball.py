"""Bouncing ball: a ball with restitution in its URDF bounces on the box ground, each apex e^2 of the last.

``urdf/bouncing_ball.urdf`` (radius 0.1 m, 0.5 kg, ``<contact><restitution value="0.8"/>``)
is released at rest with its lowest point ``height`` above the box ground, whose restitution
is set to ``ground_restitution`` with ``changeDynamics`` (the ground's URDF has none, and
Bullet combines the two links' values by their product).  Under the hook the impact law
receives the combined coefficient ``e`` (0.8 by default) and, with one frictionless-in-effect
contact (the ball falls straight, nothing to slide), Stronge's energetic coefficient gives
``v+ = -e v-`` at each impact: the ball rises to ``e^2`` of its previous apex until its
impacts fall below the simulator's impact threshold and Bullet's resting contact takes over.

The law is ``RouthImpact("auto", 50)``: each event's h is the impulse that stops the contact
alone, so a bounce takes a few steps whatever its speed.

Measures: the ball's contact with the ground (labelled "ball"): its post-impact normal
velocity at every event (``-e`` times the pre-impact one), the impact times (the bounces
shorten by ``e`` each), and the ball's final pose after ``duration``.
"""

from __future__ import annotations

from typing import Any

from bullet_setimpact import RouthImpact
from bullet_setimpact.bullet.examples import load_free_body
from bullet_setimpact.montecarlo.labels import link_label
from bullet_setimpact.montecarlo.scenario import Scenario, describe, elastic_ground, require

NAME = "bouncing_ball"
RADIUS = 0.1

DEFAULTS: dict[str, Any] = {
    "height": 0.5,  # drop height of the ball's lowest point [m]
    "ground_restitution": 1.0,  # the ground's restitution (combined with the ball's 0.8 by product)
    "duration": 2.0,  # simulated time [s]
    "time_step": 1.0 / 240.0,  # Bullet's fixed time step [s]
}


def build(client: int, **params: Any) -> Scenario:
    """The ball at rest ``height`` above the ground, gravity on, the ground's restitution set."""
    require(params, "height", params["height"] > 0.0, "> 0 m")
    ground = elastic_ground(client, params)
    ball = load_free_body(client, "bouncing_ball.urdf", [0.0, 0.0, RADIUS + params["height"]])
    return Scenario(
        name=NAME,
        client=client,
        bodies={"ball": ball},
        duration=params["duration"],
        law=RouthImpact("auto", 50),
        **describe(__doc__),
        label_contact=lambda contact: link_label(client, ball, contact, base="ball"),
        extra={"ground": ground},
    )


if __name__ == "__main__":
    from bullet_setimpact.cli import run_script

    run_script(__file__)

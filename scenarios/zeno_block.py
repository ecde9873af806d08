"""Zeno rocking block: the block wobbles from corner to corner, impacts accumulating near 2.67 s (journal Sec. 4.3).

The planar rocking block (``urdf/rocking_block_planar.urdf``: w = 1 m, h = 2 m, 1 kg,
I = (w^2 + h^2) / 12 = 5/12, mu = 1) starts flat on the box ground, pivoting about its
bottom-left corner A with angular rate ``rate`` (counter-clockwise, so the bottom-right
corner B lifts): ``v = rate (-h/2, w/2, 1)`` keeps A at rest.  As mu > w/h friction holds A
(Bullet's resting contact does, the impact law is not involved), the block swings up to an
apex (0.22 rad at 1 rad/s, journal eq. 57 corrected), falls back and strikes the ground
with B.  That impact makes B stick and A lift: the block pivots about B with the rate
scaled by (I - m r^2 cos 2 alpha) / (I + m r^2) = 0.7 (journal eq. 68 corrected, r the
corner-to-centre distance, alpha = arctan(h/w)), a mirror image of the start.  Each
half-cycle is shorter by about the same factor, so the impacts accumulate at a finite time
(about 2.67 s at 1 rad/s) and the block comes to rest.  Impacts slower than the
simulator's impact velocity threshold are left to Bullet's resting contact.

The law is the journal's rocking-block law (h = 0.3 N s, N = 10).

Measures: contacts A (left bottom corner) and B (right bottom corner): the impact times,
the ratio of the angular rate after to before each impact (0.7 in the journal's model), the
post-impact normal and tangential velocities (the striking corner sticks, the other lifts),
and the final resting pose (x, y, theta) after ``duration``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bullet_setimpact.bullet.examples import load_planar_example
from bullet_setimpact.montecarlo.labels import bottom_corner_label
from bullet_setimpact.montecarlo.scenario import GRAVITY, Scenario, planar_scenario, require

NAME = "zeno_block"
#: Link of the block in the planar URDF (after the x and z sliders).
BLOCK_LINK = 2
WIDTH, HEIGHT = 1.0, 2.0

DEFAULTS: dict[str, Any] = {
    "rate": 1.0,  # initial angular rate about corner A [rad/s] (B lifts)
    "duration": 3.0,  # simulated time [s]
    "time_step": 1.0 / 240.0,  # Bullet's fixed time step [s]
}


def build(client: int, **params: Any) -> Scenario:
    """The block flat on the ground, pivoting about A at ``rate``, gravity on."""
    rate = params["rate"]
    # The block must fall back: the centre of mass may not pass over A (the apex angle of
    # journal eq. 57 stays below pi/2 - alpha), i.e. the kinetic energy about A stays below
    # the potential-energy hump m g (|r| - h/2).
    inertia_about_a = (WIDTH**2 + HEIGHT**2) / 12.0 + (WIDTH**2 + HEIGHT**2) / 4.0
    hump = GRAVITY * (np.hypot(WIDTH, HEIGHT) / 2.0 - HEIGHT / 2.0)
    limit = np.sqrt(2.0 * hump / inertia_about_a)
    require(params, "rate", 0.0 < rate < limit, f"in (0, {limit:.3f}) rad/s so the block falls back")
    velocity = rate * np.array([-HEIGHT / 2.0, WIDTH / 2.0, 1.0])  # A = (x - w/2, y - h/2) at rest
    world = load_planar_example(client, "rocking_block", configuration=np.array([0.0, HEIGHT / 2.0, 0.0]), velocity=velocity)
    (block,) = world.bodies
    return planar_scenario(
        NAME, client, world, ["block"], params["duration"], __doc__, lambda contact: bottom_corner_label(client, block, BLOCK_LINK, contact)
    )


if __name__ == "__main__":
    from bullet_setimpact.cli import run_script

    run_script(__file__)

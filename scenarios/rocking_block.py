"""Rocking block dropped flat: the journal's 1 m x 2 m block lands on both bottom corners at once.

The planar block of journal Figs. 1 and 9 (``urdf/rocking_block_planar.urdf``: x, z and
pitch joints whose coordinates are ``planar.rocking_block``'s ``q = (x, y, theta)``) is
released at rest with its bottom face ``height`` above the box ground.  It lands flat at
``sqrt(2 g height)`` (0.4429 m/s from the default 1 cm: the journal's ``v-``), striking both
bottom corners simultaneously; the set-valued law (journal h = 0.3 N s, N = 10) may stop
it, pivot it on either corner, or anything in between, after which it rocks and settles.

Measures: contacts A (left bottom corner, body-frame x < 0) and B (right bottom corner,
x > 0) against the ground: their post-impact normal and tangential velocities at every
event (rest, pivot on A, pivot on B, or a scaled-down pivot: journal Fig. 9), and the
block's final resting pose (x, y, theta joint positions) after ``duration``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bullet_setimpact.bullet.examples import load_planar_example
from bullet_setimpact.montecarlo.labels import bottom_corner_label
from bullet_setimpact.montecarlo.scenario import Scenario, planar_scenario, require

NAME = "rocking_block"
#: What one rollout is, in the Monte Carlo figure's title.
ROLLOUT_NOUN = "landings"
#: Link of the block in the planar URDF (after the x and z sliders).
BLOCK_LINK = 2

DEFAULTS: dict[str, Any] = {
    "height": 0.01,  # drop height of the bottom face [m]
    "duration": 1.0,  # simulated time [s]
    "time_step": 1.0 / 240.0,  # Bullet's fixed time step [s]
}


def build(client: int, **params: Any) -> Scenario:
    """The block at rest ``height`` above the ground, gravity on, Bullet time step set."""
    require(params, "height", params["height"] >= 0.0, ">= 0 m")
    world = load_planar_example(client, NAME, configuration=np.array([0.0, 1.0 + params["height"], 0.0]), velocity=np.zeros(3))
    (block,) = world.bodies
    return planar_scenario(
        NAME, client, world, ["block"], params["duration"], __doc__, lambda contact: bottom_corner_label(client, block, BLOCK_LINK, contact)
    )


def sketch(ax: Any) -> None:
    """The block on the ground with its bottom corners A (left) and B (right), for the figure."""
    from matplotlib.patches import Rectangle

    ax.add_patch(Rectangle((-0.5, 0.0), 1.0, 2.0, facecolor="0.9", edgecolor="k", lw=1.2))
    ax.plot([-1.0, 1.0], [0.0, 0.0], color="0.3", lw=2.0)
    for x, label, align in ((-0.5, "A", "right"), (0.5, "B", "left")):
        ax.plot([x], [0.0], "o", color="k", ms=4)
        ax.annotate(label, (x, 0.0), xytext=(-6 if align == "right" else 6, 4), textcoords="offset points", ha=align, fontweight="bold")
    ax.annotate("", (0.0, 2.1), xytext=(0.0, 2.6), arrowprops={"arrowstyle": "->", "lw": 1.2})
    ax.text(0.1, 2.35, "falls flat", fontsize=7, va="center")
    ax.set(xlim=(-1.0, 1.0), ylim=(-0.25, 2.75), aspect="equal")
    ax.axis("off")


if __name__ == "__main__":
    from bullet_setimpact.cli import run_script

    run_script(__file__)

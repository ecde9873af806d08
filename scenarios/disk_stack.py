"""Disk stack: a disk falls onto two resting disks, five contacts at once (journal Fig. 14).

Three ``urdf/disk_planar.urdf`` disks (R = 1 m, 1 kg, I = 0.5; each on x and z sliders with
pitch; coordinates ``planar.disk_stack``'s ``q``) start at the journal's impact state: the
left and right disks rest on the box ground touching each other, the top disk touches both
and falls at ``speed``.  The impact is resolved at t = 0 with the journal's law (h = 1 N s,
N = 10, mu = sqrt 3 at every contact); the tower then settles or comes apart.

Measures: contacts A (left disk-ground), B (right disk-ground), C (top-left), D (top-right)
and E (left-right): their post-impact normal and tangential velocities (Anitescu-Potra:
rest; the set-valued law also lets one bottom disk roll away or lift while the top disk
stays on at least one of them), and the disks' final positions after ``duration``.
"""

from __future__ import annotations

from typing import Any

from bullet_setimpact import planar
from bullet_setimpact.bullet.examples import load_planar_example
from bullet_setimpact.montecarlo.labels import DISK_STACK_LETTERS, pair_label
from bullet_setimpact.montecarlo.scenario import Scenario, planar_scenario, require

NAME = "disk_stack"

DEFAULTS: dict[str, Any] = {
    "speed": 1.0,  # top disk's falling speed before the impact [m/s]
    "duration": 1.0,  # simulated time [s]
    "time_step": 1.0 / 240.0,  # Bullet's fixed time step [s]
}


def build(client: int, **params: Any) -> Scenario:
    """The three disks at the journal's impact configuration, top one falling, gravity on."""
    require(params, "speed", params["speed"] > 0.0, "> 0 m/s (the top disk must fall)")
    example = planar.disk_stack(speed=params["speed"])
    world = load_planar_example(client, NAME, configuration=example.configuration, velocity=example.v_minus)
    body_names = ("left", "right", "top")
    names = dict(zip(world.bodies, body_names, strict=True)) | {world.ground: "ground"}
    return planar_scenario(
        NAME, client, world, body_names, params["duration"], __doc__, lambda contact: pair_label(names, DISK_STACK_LETTERS, contact)
    )


if __name__ == "__main__":
    from bullet_setimpact.cli import run_script

    run_script(__file__)

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

import pybullet as p

from bullet_setimpact import RouthImpact, planar
from bullet_setimpact.bullet.contacts import Contact
from bullet_setimpact.bullet.examples import load_planar_example
from bullet_setimpact.scenario import Scenario, parameters

NAME = "disk_stack"
GRAVITY = 9.81
#: The journal's contact letters by the unordered pair of bodies in contact.
PAIRS = {
    frozenset({"left", "ground"}): "A",
    frozenset({"right", "ground"}): "B",
    frozenset({"top", "left"}): "C",
    frozenset({"top", "right"}): "D",
    frozenset({"left", "right"}): "E",
}

DEFAULTS: dict[str, Any] = {
    "speed": 1.0,  # top disk's falling speed before the impact [m/s]
    "duration": 1.0,  # simulated time [s]
    "time_step": 1.0 / 240.0,  # Bullet's fixed time step [s]
}


def pair_label(names: dict[int, str], contact: Contact) -> str:
    """``"A"``..``"E"`` by the pair of bodies in contact, else ``"<body>-<body>"``."""
    pair = (names.get(contact.body_a, str(contact.body_a)), names.get(contact.body_b, str(contact.body_b)))
    return PAIRS.get(frozenset(pair), "-".join(sorted(pair)))


def build(client: int, **params: Any) -> Scenario:
    """The three disks at the journal's impact configuration, top one falling, gravity on."""
    params = parameters(NAME, params)
    if params["speed"] <= 0.0:
        raise ValueError(f"parameter 'speed' must be > 0 (the top disk must fall), got {params['speed']!r}")
    p.setGravity(0.0, 0.0, -GRAVITY, physicsClientId=client)
    p.setTimeStep(params["time_step"], physicsClientId=client)
    example = planar.disk_stack(speed=params["speed"])
    world = load_planar_example(client, NAME, configuration=example.configuration, velocity=example.v_minus)
    bodies = dict(zip(("left", "right", "top"), world.bodies, strict=True))
    names = {body: name for name, body in bodies.items()} | {world.ground: "ground"}
    return Scenario(
        name=NAME,
        client=client,
        bodies=bodies,
        duration=params["duration"],
        law=RouthImpact(example.step, example.max_steps),
        description=(__doc__ or "").strip().splitlines()[0],
        measures=" ".join((__doc__ or "").split("Measures:", 1)[1].split("\n\n", 1)[0].split()),
        label_contact=lambda contact: pair_label(names, contact),
        extra={"ground": world.ground, "example": example},
    )


if __name__ == "__main__":
    from bullet_setimpact.scenario import run_standalone

    run_standalone("disk_stack")

"""URDF drop: any URDF (a file, a shipped one or a pybullet_data name) released above the box ground.

The body given by ``urdf`` (a path; else a file name in the project's ``urdf/``; else a
name inside ``pybullet_data`` such as ``r2d2.urdf`` or ``a1/a1.urdf``) is loaded turned by
``roll``, ``pitch``, ``yaw`` (rad, about the world x, y, z axes), with its base free or, for
``fixed_base``, fixed where it is loaded, and raised so that its lowest collision point is
``height`` above the box ground (measured with ``getClosestPoints``, so it holds for any
shape).  It is released at rest; with ``free_joints`` PyBullet's default joint motors are
switched off, so the multibody is passive, as the impact law sees it.  Masses and inertias
are the file's (``URDF_USE_INERTIA_FROM_FILE``).  Default: the rocking slab, which lands
flat on four corners (the ``slab_drop`` scenario, here without its corner labels).

The file is checked before PyBullet sees it (:func:`bullet_setimpact.bullet.urdf.check_urdf`)
and refused with a ``ValueError`` naming the file and the problem: not found, not
well-formed XML (e.g. truncated), not a ``<robot>``, a link or joint that is malformed (a
joint of unknown type, a revolute or prismatic one without ``<limit>``), a mesh it
references that does not exist where PyBullet would look for it or that PyBullet cannot
read, no collision geometry, or no link that could move having a positive mass; and a root
link of mass 0 without ``fixed_base`` (PyBullet fixes such a base, so it would not drop).  Links
without ``<inertial>`` have no mass (the URDF convention; PyBullet would silently give them
1 kg).

The law is ``RouthImpact(law_step, law_max_steps)``, with ``law_step = 0`` meaning
``"auto"``: each event's h is the impulse that stops a single contact alone, which fits an
unknown body at any drop height.

Measures: every link of the dropped body that touches the ground, labelled by its URDF link
name (the root link by its own name): its post-impact normal and tangential velocities
(stick, slide, lift off), the number and timing of the impact events, and the body's final
pose (base position, orientation and joint positions) after ``duration``.
"""

from __future__ import annotations

from typing import Any

import pybullet as p

from bullet_setimpact import RouthImpact
from bullet_setimpact.bullet.examples import load_static
from bullet_setimpact.bullet.urdf import check_urdf, resolve_urdf
from bullet_setimpact.montecarlo.labels import link_label
from bullet_setimpact.montecarlo.scenario import Scenario, describe, raise_body, require

NAME = "urdf_drop"
#: Where the body is first loaded, before it is lowered to ``height`` [m].
LOAD_HEIGHT = 10.0
#: Distance within which ``getClosestPoints`` looks for the ground when placing the body [m].
SEARCH_DISTANCE = 1000.0

DEFAULTS: dict[str, Any] = {
    "urdf": "rocking_slab.urdf",  # a path, a file in urdf/, or a pybullet_data name
    "height": 0.01,  # drop height of the lowest collision point [m]
    "roll": 0.0,  # initial orientation about the world x, y, z axes [rad]
    "pitch": 0.0,
    "yaw": 0.0,
    "fixed_base": False,  # fix the base where it is loaded (a robot arm over the ground)
    "free_joints": True,  # switch off PyBullet's default joint motors
    "law_step": 0.0,  # RouthImpact's h [N s]; 0 for "auto"
    "law_max_steps": 50,  # RouthImpact's N
    "duration": 1.0,  # simulated time [s]
    "time_step": 1.0 / 240.0,  # Bullet's fixed time step [s]
}


def build(client: int, **params: Any) -> Scenario:
    """The checked URDF at rest, its lowest collision point ``height`` above the box ground."""
    require(params, "height", params["height"] >= 0.0, ">= 0 m")
    require(params, "law_step", params["law_step"] >= 0.0, ">= 0 N s (0 for 'auto')")
    require(params, "law_max_steps", params["law_max_steps"] >= 1, ">= 1")
    summary = check_urdf(resolve_urdf(params["urdf"]), params["fixed_base"])
    if not params["fixed_base"] and summary.masses[summary.root] == 0.0:
        raise ValueError(
            f"URDF {summary.path}: its root link {summary.root!r} has mass 0, which PyBullet takes as a fixed base: "
            "released, it would hang where it is loaded and never drop; give the root a positive mass, or set "
            "fixed_base=true to fix it deliberately (an arm over the ground)"
        )
    ground = load_static(client)
    orientation = p.getQuaternionFromEuler([params["roll"], params["pitch"], params["yaw"]])
    try:
        body = p.loadURDF(
            str(summary.path),
            [0.0, 0.0, LOAD_HEIGHT],
            orientation,
            useFixedBase=params["fixed_base"],
            flags=p.URDF_USE_INERTIA_FROM_FILE,
            physicsClientId=client,
        )
    except p.error as exc:
        raise ValueError(f"URDF {summary.path} passed the checks but PyBullet could not load it: {exc}") from None
    points = p.getClosestPoints(body, ground, SEARCH_DISTANCE, physicsClientId=client)
    if not points:
        raise ValueError(f"URDF {summary.path}: PyBullet built no collision shape that could reach the ground")
    raise_body(client, body, params["height"] - min(point[8] for point in points))
    if params["free_joints"]:
        joints = [
            j
            for j in range(p.getNumJoints(body, physicsClientId=client))
            if p.getJointInfo(body, j, physicsClientId=client)[2] in (p.JOINT_REVOLUTE, p.JOINT_PRISMATIC)
        ]
        p.setJointMotorControlArray(body, joints, p.VELOCITY_CONTROL, forces=[0.0] * len(joints), physicsClientId=client)
    law_step = "auto" if params["law_step"] == 0.0 else params["law_step"]
    return Scenario(
        name=NAME,
        client=client,
        bodies={"robot": body},
        duration=params["duration"],
        law=RouthImpact(law_step, params["law_max_steps"]),
        **describe(__doc__),
        label_contact=lambda contact: link_label(client, body, contact, base=summary.root),
        extra={"ground": ground, "urdf": summary},
    )


if __name__ == "__main__":
    from bullet_setimpact.cli import run_script

    run_script(__file__)

"""Humanoid footfall: a standing humanoid dropped a few centimetres lands flat on both feet.

``humanoid/humanoid.urdf`` from ``pybullet_data`` (the DeepMimic humanoid: spherical chest,
neck, hips, ankles and shoulders, revolute knees and elbows, 45 kg; Y-up, loaded turned
+90 deg about x so that it stands along +z, at ``globalScaling`` 0.25: 1.8 m tall) is
released at rest in its zero posture (standing upright, arms down) with the soles of its
box feet ``height`` above the box ground, so both feet land flat together, eight sole
corners at once.  The joints are held by PyBullet's POSITION_CONTROL motors at the zero
posture with finite forces (DeepMimic's limits: 200 N m chest and hips, 150 knees,
90 ankles, 100 shoulders, 60 elbows, 50 neck, times ``torque_scale``).  The motors are not
part of the impact (the law sees the free multibody); they act in the steps before and
after.

The law is ``RouthImpact("auto", 100)``: ``"auto"`` scales h to the impulse that stops a
single contact alone, which for a sole corner (a light foot on a spherical ankle) is a
small fraction of the whole body's momentum, so the eight-corner landing takes many steps
(about 35-40 at any drop height: the impact is homogeneous in the velocity); N = 100 leaves
room for that.

Measures: the sole corners of the two feet, labelled by foot and corner
(``right_ankle:heel-out``, ``left_ankle:toe-in``, ...; other links by name): their
post-impact normal and tangential velocities (flat landing, heel- or toe-first rocking,
one foot bouncing), and the humanoid's final pose (base position and orientation, joint
positions) after ``duration``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pybullet as p

from bullet_setimpact import RouthImpact
from bullet_setimpact.bullet.contacts import Contact
from bullet_setimpact.montecarlo.labels import in_link_frame, link_label
from bullet_setimpact.montecarlo.scenario import Scenario, describe, raise_body, setup_robot_drop

NAME = "humanoid_footfall"
URDF = "humanoid/humanoid.urdf"
SCALE = 0.25
#: DeepMimic's motor force limits by joint name [N m] (``humanoid_stable_pd.py``).
MAX_FORCE = {
    "chest": 200.0,
    "neck": 50.0,
    "right_hip": 200.0,
    "right_knee": 150.0,
    "right_ankle": 90.0,
    "right_shoulder": 100.0,
    "right_elbow": 60.0,
    "left_hip": 200.0,
    "left_knee": 150.0,
    "left_ankle": 90.0,
    "left_shoulder": 100.0,
    "left_elbow": 60.0,
}
FEET = ("right_ankle", "left_ankle")

DEFAULTS: dict[str, Any] = {
    "height": 0.03,  # drop height of the soles [m]
    "position_gain": 0.3,  # POSITION_CONTROL gains (PyBullet's kp, kd)
    "velocity_gain": 1.0,
    "torque_scale": 1.0,  # motor force limits as a multiple of DeepMimic's
    "duration": 1.0,  # simulated time [s]
    "time_step": 1.0 / 240.0,  # Bullet's fixed time step [s]
}


def _link_frame(client: int, robot: int, link: int) -> tuple[np.ndarray, np.ndarray]:
    state = p.getLinkState(robot, link, computeForwardKinematics=True, physicsClientId=client)
    return np.array(state[0]), np.array(p.getMatrixFromQuaternion(state[1])).reshape(3, 3)


def contact_label(client: int, robot: int, foot_links: dict[int, str], contact: Contact) -> str:
    """``"<foot>:<heel|toe>-<in|out>"`` for a sole corner, else the link's name.

    Heel/toe: the corner's side along the foot's long axis (the URDF's x, forward);
    in/out: towards or away from the body's midline (the URDF's z, lateral)."""
    link, point, _ = contact.side(robot)
    if link not in foot_links:
        return link_label(client, robot, contact)
    local = in_link_frame(client, robot, link, point)  # inertial frame = URDF axes (no rotation)
    name = foot_links[link]
    outward = local[2] > 0.0 if name.startswith("right") else local[2] < 0.0
    return f"{name}:{'toe' if local[0] > 0.0 else 'heel'}-{'out' if outward else 'in'}"


def build(client: int, **params: Any) -> Scenario:
    """The humanoid standing upright, soles ``height`` above the ground, motors holding the zero posture."""
    ground = setup_robot_drop(client, params)
    upright = p.getQuaternionFromEuler([np.pi / 2.0, 0.0, 0.0])  # the URDF's +y up -> world +z
    robot = p.loadURDF(URDF, [0.0, 0.0, 2.0], upright, globalScaling=SCALE, flags=p.URDF_MAINTAIN_LINK_ORDER, physicsClientId=client)
    names = {j: p.getJointInfo(robot, j, physicsClientId=client)[1].decode() for j in range(p.getNumJoints(robot, physicsClientId=client))}
    foot_links = {j: name for j, name in names.items() if name in FEET}
    # lowest sole corner: the foot boxes' corners in the world
    lowest = np.inf
    for link in foot_links:
        centre, rotation = _link_frame(client, robot, link)
        shape = p.getCollisionShapeData(robot, link, physicsClientId=client)[0]
        half = np.array(shape[3]) / 2.0
        offset, orientation = np.array(shape[5]), np.array(p.getMatrixFromQuaternion(shape[6])).reshape(3, 3)
        corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * half
        lowest = min(lowest, float((centre + (offset + corners @ orientation.T) @ rotation.T)[:, 2].min()))
    raise_body(client, robot, params["height"] - lowest)
    gains = {"positionGain": params["position_gain"], "velocityGain": params["velocity_gain"]}
    for joint, name in names.items():
        kind = p.getJointInfo(robot, joint, physicsClientId=client)[2]
        force = MAX_FORCE.get(name, 0.0) * params["torque_scale"]
        if kind == p.JOINT_SPHERICAL:
            p.setJointMotorControlMultiDof(
                robot,
                joint,
                p.POSITION_CONTROL,
                targetPosition=[0.0, 0.0, 0.0, 1.0],
                targetVelocity=[0.0, 0.0, 0.0],
                force=[force] * 3,
                physicsClientId=client,
                **gains,
            )
        elif kind == p.JOINT_REVOLUTE:
            p.setJointMotorControl2(robot, joint, p.POSITION_CONTROL, targetPosition=0.0, force=force, physicsClientId=client, **gains)
    return Scenario(
        name=NAME,
        client=client,
        bodies={"humanoid": robot},
        duration=params["duration"],
        law=RouthImpact("auto", 100),
        **describe(__doc__),
        label_contact=lambda contact: contact_label(client, robot, foot_links, contact),
        extra={"ground": ground, "feet": tuple(foot_links)},
    )


if __name__ == "__main__":
    from bullet_setimpact.cli import run_script

    run_script(__file__)

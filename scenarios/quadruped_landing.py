"""Quadruped landing: a Unitree A1 released in a standing posture lands on its four feet at once.

``a1/a1.urdf`` from ``pybullet_data`` (12 revolute joints, 12.5 kg; the feet are the
spheres of radius 0.02 m on the fixed ``*_toe`` links) is released at rest, level, its
joints in a standing posture (hip ``hip``, thigh ``thigh``, calf ``calf`` rad on every
leg) with its four feet ``height`` above the box ground, so all four strike together at
``sqrt(2 g height)``.  The joints are held by PyBullet's POSITION_CONTROL motors (gains
``position_gain`` and ``velocity_gain``) with finite torques: the URDF's effort limits
(20 N m hips, 55 N m thighs and calves) times ``torque_scale``.  The motors are not part of
the impact (the law sees the free multibody); they act in the steps before and after.

The law is ``RouthImpact("auto", 20)``: the journal gives no h for a robot, and ``"auto"``
scales each event's h to the impulse that stops a single contact alone, so one step can end
any foot's collision whatever the drop height; N = 20 leaves room for four spatial feet.

Measures: the four feet, labelled by their link names (``FR_toe``, ``FL_toe``, ``RR_toe``,
``RL_toe``; any other link in contact by its own name): their post-impact normal and
tangential velocities (which feet stick, slide or bounce), the number and timing of the
landing events, and the robot's final standing pose (base position and orientation, joint
positions) after ``duration``.
"""

from __future__ import annotations

from typing import Any

import pybullet as p

from bullet_setimpact import RouthImpact
from bullet_setimpact.montecarlo.labels import link_label
from bullet_setimpact.montecarlo.scenario import Scenario, describe, raise_body, setup_robot_drop

NAME = "quadruped_landing"
URDF = "a1/a1.urdf"
FOOT_RADIUS = 0.02

DEFAULTS: dict[str, Any] = {
    "height": 0.05,  # drop height of the feet [m]
    "hip": 0.0,  # standing posture: hip abduction [rad]
    "thigh": 0.8,  # thigh pitch [rad]
    "calf": -1.6,  # knee [rad]
    "position_gain": 0.2,  # POSITION_CONTROL gains (PyBullet's kp, kd)
    "velocity_gain": 1.0,
    "torque_scale": 1.0,  # motor torque limit as a multiple of the URDF effort limits
    "duration": 2.0,  # simulated time [s]
    "time_step": 1.0 / 240.0,  # Bullet's fixed time step [s]
}


def build(client: int, **params: Any) -> Scenario:
    """The A1 in its standing posture, feet ``height`` above the ground, motors holding the joints."""
    ground = setup_robot_drop(client, params)
    robot = p.loadURDF(URDF, [0.0, 0.0, 1.0], flags=p.URDF_USE_INERTIA_FROM_FILE, physicsClientId=client)
    joints, targets, forces = [], [], []
    posture = {"hip": params["hip"], "upper": params["thigh"], "lower": params["calf"]}
    for joint in range(p.getNumJoints(robot, physicsClientId=client)):
        info = p.getJointInfo(robot, joint, physicsClientId=client)
        if info[2] == p.JOINT_FIXED:
            continue
        role = info[1].decode().split("_")[1]  # FR_hip_joint, FR_upper_joint, FR_lower_joint
        lower, upper = info[8], info[9]
        if not lower <= posture[role] <= upper:
            name = {"upper": "thigh", "lower": "calf"}.get(role, role)
            raise ValueError(
                f"parameter {name!r} = {posture[role]!r} is outside joint {info[1].decode()}'s limits [{lower:.3f}, {upper:.3f}]"
            )
        joints.append(joint)
        targets.append(posture[role])
        forces.append(info[10] * params["torque_scale"])
        p.resetJointState(robot, joint, posture[role], 0.0, physicsClientId=client)
    feet = [
        j
        for j in range(p.getNumJoints(robot, physicsClientId=client))
        if p.getJointInfo(robot, j, physicsClientId=client)[12].decode().endswith("_toe")
    ]
    lowest = min(p.getLinkState(robot, foot, computeForwardKinematics=True, physicsClientId=client)[0][2] for foot in feet) - FOOT_RADIUS
    # shift only: the base's pose is its inertial frame's, which the file's inertia tensor turns
    # slightly (Bullet diagonalizes it); the loaded orientation keeps the URDF frame level
    raise_body(client, robot, params["height"] - lowest)
    p.setJointMotorControlArray(
        robot,
        joints,
        p.POSITION_CONTROL,
        targetPositions=targets,
        forces=forces,
        positionGains=[params["position_gain"]] * len(joints),
        velocityGains=[params["velocity_gain"]] * len(joints),
        physicsClientId=client,
    )
    return Scenario(
        name=NAME,
        client=client,
        bodies={"a1": robot},
        duration=params["duration"],
        law=RouthImpact("auto", 20),
        **describe(__doc__),
        label_contact=lambda contact: link_label(client, robot, contact, base="trunk"),
        extra={"ground": ground, "feet": tuple(feet), "joints": tuple(joints), "targets": tuple(targets)},
    )


if __name__ == "__main__":
    from bullet_setimpact.cli import run_script

    run_script(__file__)

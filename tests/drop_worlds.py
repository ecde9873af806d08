"""Drop worlds of ``pybullet_data`` bodies: one robot or object released above a ground.

The worlds of the hook-overhead benchmark and of the robot survey: quadrupeds, a humanoid,
wheeled robots, arms falling onto a table, meshes and primitives, and a jenga stack, each on a
box ground (``ground_box.urdf``) or on a true ``GEOM_PLANE``
(``pybullet_data/plane_implicit.urdf``).
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass

import pybullet as p
import pybullet_data

from bullet_setimpact.bullet import following
from bullet_setimpact.bullet.examples import load_jenga_stack
from bullet_setimpact.bullet.inventory import movable_joints
from bullet_setimpact.data import data_path

#: Ground kinds: the shipped box ground (top face z = 0) and pybullet_data's GEOM_PLANE.
GROUNDS = ("box", "plane")


@dataclass(frozen=True)
class DropWorld:
    """A body (``urdf`` inside ``pybullet_data``; ``"jenga"``: a 3-layer jenga stack) dropped
    onto a ground.

    ``on_table``: a fixed-base arm standing on ``table/table.urdf`` (on the ground) with its
    joint motors off and every revolute joint tilted by ``tilt`` [rad], so it falls onto
    the table.  Its joints keep ``joint_friction`` [N m] of Coulomb friction (a velocity
    motor with target 0 and that force, PyBullet's joint-friction idiom), as an unpowered
    arm's gearboxes do, and ``joint_damping`` [N m s] replaces the URDF's damping when set
    (``changeDynamics``): the kuka's 0.5 N m s, which Bullet integrates explicitly, grows
    any velocity of its last joint 2.6x per step at 240 Hz, in plain Bullet as well
    (:mod:`~bullet_setimpact.bullet.damping`), so its world sets none and keeps the friction.
    PyBullet still reports the URDF's damping, so a simulator built on that world warns
    (:class:`~bullet_setimpact.errors.UnstableDampingWarning`) of what no longer holds.
    """

    name: str
    urdf: str
    on_table: bool = False
    tilt: float = 0.0
    joint_friction: float = 0.0
    joint_damping: float | None = None


DROP_WORLDS = (
    DropWorld("a1", "a1/a1.urdf"),
    DropWorld("aliengo", "aliengo/aliengo.urdf"),
    DropWorld("mini_cheetah", "mini_cheetah/mini_cheetah.urdf"),
    DropWorld("minitaur", "quadruped/minitaur.urdf"),
    DropWorld("laikago", "laikago/laikago_toes.urdf"),
    DropWorld("humanoid", "humanoid/humanoid.urdf"),
    DropWorld("r2d2", "r2d2.urdf"),
    DropWorld("racecar", "racecar/racecar.urdf"),
    DropWorld("husky", "husky/husky.urdf"),
    DropWorld("kuka", "kuka_iiwa/model.urdf", on_table=True, tilt=0.4, joint_friction=1.0, joint_damping=0.0),
    DropWorld("panda", "franka_panda/panda.urdf", on_table=True, tilt=0.4, joint_friction=0.5),
    DropWorld("cube", "cube_small.urdf"),
    DropWorld("sphere", "sphere_small.urdf"),
    DropWorld("duck", "duck_vhacd.urdf"),
    DropWorld("teddy", "teddy_vhacd.urdf"),
    DropWorld("lego", "lego/lego.urdf"),
    DropWorld("jenga", "jenga"),
)


def load_ground(client: int, ground: str) -> int:
    """Load a ground of kind ``ground`` (:data:`GROUNDS`); ``ValueError`` naming the kinds."""
    if ground == "box":
        return p.loadURDF(os.path.join(data_path(), "ground_box.urdf"), useFixedBase=True, physicsClientId=client)
    if ground == "plane":
        return p.loadURDF(os.path.join(pybullet_data.getDataPath(), "plane_implicit.urdf"), useFixedBase=True, physicsClientId=client)
    raise ValueError(f"ground must be one of {GROUNDS}, got {ground!r}")


def load_drop_world(client: int, world: DropWorld, ground: str = "box", height: float = 0.05) -> list[int]:
    """Load ``world`` on ``ground`` with its lowest point ``height`` [m] above the surface it
    lands on (the ground, or the table top); gravity and the time step are the caller's.
    Returns the dropped bodies."""
    load_ground(client, ground)
    if world.urdf == "jenga":
        return load_jenga_stack(client, drop=height)
    path = os.path.join(pybullet_data.getDataPath(), world.urdf)
    top = 0.0
    if world.on_table:
        table = p.loadURDF(os.path.join(pybullet_data.getDataPath(), "table/table.urdf"), useFixedBase=True, physicsClientId=client)
        top = p.getAABB(table, -1, physicsClientId=client)[1][2]
    body = p.loadURDF(path, [0, 0, 5.0], useFixedBase=world.on_table, physicsClientId=client)
    lowest = lowest_point(client, body)
    position, orientation = p.getBasePositionAndOrientation(body, physicsClientId=client)
    base = [position[0], position[1], position[2] - lowest + top + height]
    if world.on_table:  # a fixed base cannot be moved by reset: reload it where it belongs
        p.removeBody(body, physicsClientId=client)
        body = p.loadURDF(path, base, orientation, useFixedBase=True, physicsClientId=client)
    else:
        p.resetBasePositionAndOrientation(body, base, orientation, physicsClientId=client)
    if world.on_table:
        for joint in movable_joints(client, body):
            p.setJointMotorControl2(body, joint, p.VELOCITY_CONTROL, force=world.joint_friction, physicsClientId=client)
            if world.joint_damping is not None:
                p.changeDynamics(body, joint, jointDamping=world.joint_damping, physicsClientId=client)
            if p.getJointInfo(body, joint, physicsClientId=client)[2] == p.JOINT_REVOLUTE:
                p.resetJointState(body, joint, world.tilt, physicsClientId=client)
    return [body]


def assert_unfollowed() -> None:
    """No simulator or hook of an earlier test or run still follows the clients (one kept alive
    by a reference cycle is collected), so that what the next lines load is loaded unseen: its
    motors are those a simulator does not know (:mod:`bullet_setimpact.bullet.motors`), whatever
    ran before in the process."""
    gc.collect()
    assert following._followers == 0, "a simulator or hook of an earlier test still follows the clients"


def lowest_point(client: int, body: int) -> float:
    """The height [m] of a body's lowest point: the least bottom of its links' world boxes (``getAABB``)."""
    return min(p.getAABB(body, link, physicsClientId=client)[0][2] for link in range(-1, p.getNumJoints(body, physicsClientId=client)))


@contextlib.contextmanager
def bullet_output_discarded() -> Iterator[None]:
    """Send the process's C-level standard output, where Bullet prints its URDF warnings (the
    humanoid's warns of every joint without an axis at every load), to ``os.devnull``."""
    sys.stdout.flush()
    saved = os.dup(1)
    with open(os.devnull, "w") as devnull:
        os.dup2(devnull.fileno(), 1)
        try:
            yield
        finally:
            os.dup2(saved, 1)
            os.close(saved)

"""Per-configuration dynamics of a PyBullet world: ``M(q)``, point Jacobians, generalized
forces (MuJoCo's ``Data``, beside :mod:`~bullet_setimpact.bullet.model`'s static layout).

PyBullet conventions this module relies on (pybullet 3.2.7, proven in
``tests/test_bullet_model.py``):

* ``calculateMassMatrix`` and ``calculateJacobian`` of a floating base use
  ``[base angular, base linear (of the centre of mass), qdot]``, both base parts in the BASE
  frame, i.e. the base's inertial frame whose pose ``getBasePositionAndOrientation``
  reports.  Their Jacobians are expressed in that frame too, for fixed bases as well.
* ``calculateJacobian``'s ``localPosition`` of link ``i >= 0`` is measured from the link's
  URDF (joint) frame origin but along the axes of the link's INERTIAL frame.  The link's
  centre of mass is therefore at ``R_inertial^T d`` (``d, R_inertial``: ``getDynamicsInfo``'s
  local inertial position and orientation).
* ``calculateJacobian`` refuses bodies without a movable joint; ``calculateMassMatrix``
  fails for maximal-coordinate bodies.  Rigid bodies therefore use rigid-body kinematics
  and, when jointless, ``M = diag(m I, R diag(I_local) R^T)`` from ``getDynamicsInfo``.
* **Spherical joints.**  ``calculateJacobian`` refuses them ("Spherical joints are not
  supported").  ``calculateMassMatrix`` accepts ``objPositions`` of any length without an
  error but its ``M`` is wrong: ``0.5 v^T M v`` is off from the links' kinetic energy by
  8 to 60 % for every encoding tried (flattened quaternions, 3 values per joint as rotation
  vectors or as any of the 24 Euler-angle conventions); Bullet's inverse-dynamics spherical
  joint is marked "todo: review" in its source.
  Bodies with a spherical joint therefore get their link Jacobians and
  ``M = sum_k m_k J_v^T J_v + J_w^T R_k diag(I_k) R_k^T J_w`` from
  :mod:`~bullet_setimpact.bullet.kinematics`, built on ``getLinkStates``' double-precision
  centre-of-mass frames (fields 0 and 1; the URDF-frame fields 4 and 5 are single precision),
  ``getJointInfo``'s ``parentFramePos`` (joint origin in the parent's inertial frame) and
  ``jointAxis`` (in the child's inertial frame).  Bodies without one keep the
  ``calculateJacobian`` / ``calculateMassMatrix`` path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pybullet as p

from . import kinematics
from .bodies import BodyModel
from .frames import inertial_position, rotation_matrix
from .inventory import check_client


class Layout(Protocol):
    """What a :class:`Configuration` reads of its :class:`~bullet_setimpact.bullet.model.WorldModel`."""

    client: int
    bodies: tuple[BodyModel, ...]
    nv: int

    def block(self, body: int) -> slice: ...

    def body(self, body: int) -> BodyModel: ...


def _base_to_world(matrix: np.ndarray, rotation: np.ndarray) -> np.ndarray:
    """``matrix @ T`` where ``T`` maps a world block ``[v, omega, qdot]`` to Bullet's base-frame one.

    Bullet's floating-base velocity is ``[R^T omega, R^T v, qdot]`` (``R``: base orientation).
    """
    out = np.empty_like(matrix)
    out[:, :3] = matrix[:, 3:6] @ rotation.T
    out[:, 3:6] = matrix[:, :3] @ rotation.T
    out[:, 6:] = matrix[:, 6:]
    return out


@dataclass(frozen=True)
class _Pose:
    """One body's base pose (inertial frame) and joint positions."""

    position: np.ndarray  # (3,) base centre of mass
    rotation: np.ndarray  # (3, 3) base inertial frame
    joints: list[float]  # movable joint positions (for calculateJacobian / calculateMassMatrix)
    zeros: list[float]  # zero rates, for calculateJacobian
    # bodies with a kinematics.Tree: centres of mass (n + 1, 3) and inertial-frame rotations
    # (n + 1, 3, 3) of the base and every link, see kinematics.read_frames
    frames: tuple[np.ndarray, np.ndarray] | None = None


class Configuration:
    """``M(q)`` and world-frame point Jacobians at the configuration read at construction.

    Valid as long as PyBullet's positions do not change (no ``stepSimulation`` or reset of
    positions in between).  Link Jacobians are computed once per link and cached, so many
    points on one link cost one ``calculateJacobian`` call.  Bodies with spherical joints
    read every link's centre-of-mass frame at construction and get all their link Jacobians
    at once from :mod:`~bullet_setimpact.bullet.kinematics` (and ``M`` from those).

    Parameters
    ----------
    model : WorldModel
    """

    def __init__(self, model: Layout) -> None:
        client = check_client(model.client)
        self.model = model
        self._poses: dict[int, _Pose] = {}
        for body in model.bodies:
            if body.tree is not None:
                positions, rotations = kinematics.read_frames(client, body.body, body.num_links)
                self._poses[body.body] = _Pose(positions[0], rotations[0], [], [], (positions, rotations))
                continue
            position, orientation = p.getBasePositionAndOrientation(body.body, physicsClientId=client)
            joints = [state[0] for state in p.getJointStates(body.body, body.joints, physicsClientId=client)] if body.joints else []
            self._poses[body.body] = _Pose(np.asarray(position), rotation_matrix(orientation), joints, [0.0] * len(joints))
        self._links: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
        self._trees: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._mass_matrix: np.ndarray | None = None

    def mass_matrix(self) -> np.ndarray:
        """Generalized inertia ``M(q)``, shape ``(nv, nv)``, block-diagonal over bodies (world layout)."""
        if self._mass_matrix is None:
            M = np.zeros((self.model.nv, self.model.nv))
            for body in self.model.bodies:
                M[self.model.block(body.body), self.model.block(body.body)] = self._body_mass_matrix(body)
            self._mass_matrix = 0.5 * (M + M.T)
        return self._mass_matrix.copy()

    def _body_mass_matrix(self, body: BodyModel) -> np.ndarray:
        client, pose = self.model.client, self._poses[body.body]
        if body.jointless:
            mass, _, inertia = p.getDynamicsInfo(body.body, -1, physicsClientId=client)[:3]
            block = np.zeros((6, 6))
            block[:3, :3] = mass * np.eye(3)
            block[3:, 3:] = (pose.rotation * np.asarray(inertia)) @ pose.rotation.T
            return block
        if body.tree is not None:
            dynamics = [p.getDynamicsInfo(body.body, link, physicsClientId=client) for link in range(-1, body.num_links)]
            masses = np.array([info[0] for info in dynamics])
            inertias = np.array([info[2] for info in dynamics])
            assert pose.frames is not None
            return kinematics.mass_matrix(*self._tree_jacobians(body), pose.frames[1], masses, inertias)
        M = np.asarray(p.calculateMassMatrix(body.body, pose.joints, physicsClientId=client))
        if body.floating:
            M = _base_to_world(_base_to_world(M, pose.rotation).T, pose.rotation)
        return M

    def _tree_jacobians(self, body: BodyModel) -> tuple[np.ndarray, np.ndarray]:
        """``kinematics.jacobians`` of a body with a tree: ``J_v, J_omega``, shape ``(n + 1, 3, nv_body)``."""
        if body.body not in self._trees:
            assert body.tree is not None, "only bodies with a kinematic tree take this path"
            frames = self._poses[body.body].frames
            assert frames is not None
            self._trees[body.body] = kinematics.jacobians(body.tree, *frames)
        return self._trees[body.body]

    def _link_jacobians(self, body: BodyModel, link: int) -> tuple[np.ndarray, np.ndarray]:
        """Centre of mass ``(3,)`` and the Jacobian ``(6, nv_body)`` of its velocity and the link's
        angular velocity, world frame, body-block columns."""
        key = (body.body, link)
        if key not in self._links:
            pose = self._poses[body.body]
            if body.tree is not None:
                linear, angular = self._tree_jacobians(body)
                assert pose.frames is not None
                com = pose.frames[0][link + 1]
                jacobian = np.concatenate((linear[link + 1], angular[link + 1]))
            elif link == -1 or not body.joints:  # the base, or a link welded to a free base
                jacobian = np.eye(6, body.nv)
                com = pose.position
            else:
                client = self.model.client
                com = inertial_position(client, body.body, link)
                bullet = p.calculateJacobian(
                    body.body, link, body.com_offsets[link].tolist(), pose.joints, pose.zeros, pose.zeros, physicsClientId=client
                )
                # base frame -> world frame, for fixed bases too
                jacobian = (pose.rotation @ np.asarray(bullet)).reshape(6, -1)
                if body.floating:
                    jacobian = _base_to_world(jacobian, pose.rotation)
            self._links[key] = (com, jacobian)
        return self._links[key]

    def fixed(self, body: int, link: int) -> bool:
        """Whether a link cannot move (a static body, or the base of a fixed-base one): its point
        Jacobians are zero."""
        model = self.model.body(body)
        return model.static or (link == -1 and not model.floating)

    def _checked_link(self, body: int, link: int) -> BodyModel:
        """The model of ``body``, after checking that ``link`` is one of its links (or -1)."""
        model = self.model.body(body)
        if isinstance(link, bool) or not isinstance(link, (int, np.integer)) or not -1 <= link < model.num_links:
            raise ValueError(f"link {link!r} does not exist on body {body} ({model.name!r}); expected -1 .. {model.num_links - 1}")
        return model

    def point_jacobian(self, body: int, link: int, points: np.ndarray) -> np.ndarray:
        """World-frame Jacobian of material points of a link, columns in the world layout.

        ``J @ v`` is the world velocity of the point of ``body``'s ``link`` that is at
        ``points`` now.  Static bodies and fixed bases give zeros.

        Parameters
        ----------
        body : int
        link : int
            ``-1`` for the base, else a link (joint) index.
        points : array_like, shape (3,) or (k, 3)
            WORLD coordinates.

        Returns
        -------
        ndarray, shape (3, nv) or (k, 3, nv)

        Raises
        ------
        ValueError
            If the body is not in the model, the link does not exist, or ``points`` has the
            wrong shape or is not finite.
        """
        model = self._checked_link(body, link)
        points = np.asarray(points, dtype=float)
        if points.shape[-1:] != (3,) or points.ndim > 2 or not np.isfinite(points).all():
            raise ValueError(f"points must be finite with shape (3,) or (k, 3), got shape {points.shape}")
        jacobian = np.zeros((*points.shape, self.model.nv))
        if self.fixed(body, int(link)):
            return jacobian
        com, twist = self._link_jacobians(model, int(link))
        # v_p = v_com + omega x (p - com) = (J_com - [p - com]_x J_omega) v
        offsets = points - com
        x, y, z = offsets[..., 0], offsets[..., 1], offsets[..., 2]
        skew = np.zeros((*points.shape, 3))
        skew[..., 0, 1], skew[..., 0, 2], skew[..., 1, 2] = -z, y, -x
        skew[..., 1, 0], skew[..., 2, 0], skew[..., 2, 1] = z, -y, x
        jacobian[..., self.model.block(body)] = twist[:3] - skew @ twist[3:]
        return jacobian

    def angular_jacobian(self, body: int, link: int) -> np.ndarray:
        """World-frame Jacobian ``(3, nv)`` of a link's angular velocity, columns in the world layout
        (zeros for a link that cannot move).  Errors as :meth:`point_jacobian`."""
        model = self._checked_link(body, link)
        jacobian = np.zeros((3, self.model.nv))
        if not self.fixed(body, int(link)):
            jacobian[:, self.model.block(body)] = self._link_jacobians(model, int(link))[1][3:]
        return jacobian

    def relative_jacobian(self, body_a: int, link_a: int, body_b: int, link_b: int, points: np.ndarray) -> np.ndarray:
        """Jacobian of the velocity of A's material point relative to B's, ``J_A(p) - J_B(p)``.

        Shapes and errors as :meth:`point_jacobian`.  With a contact normal on B pointing
        to A, ``n @ J`` is the separating velocity.
        """
        return self.point_jacobian(body_a, link_a, points) - self.point_jacobian(body_b, link_b, points)

    def external_force(self) -> np.ndarray:
        """Generalized non-contact force at this configuration, in the model's layout: gravity,
        ``sum_links J_com^T m g``, plus the torques Bullet's joint motors applied in the last
        step (``getJointState``'s applied torque, single-DoF joints).  Coriolis and centrifugal
        terms are left out.  It is what ``PlasticImpact``'s pseudo-impulse needs (Johnson et
        al. eq. 55).
        """
        model, client = self.model, self.model.client
        parameters = p.getPhysicsEngineParameters(physicsClientId=client)
        gravity = np.array([parameters[f"gravityAcceleration{axis}"] for axis in "XYZ"])
        force = np.zeros(model.nv)
        for body in model.bodies:
            for link in range(-1, body.num_links):
                mass = p.getDynamicsInfo(body.body, link, physicsClientId=client)[0]
                if mass <= 0.0:
                    continue
                force += self.point_jacobian(body.body, link, inertial_position(client, body.body, link)).T @ (mass * gravity)
            offset = model.block(body.body).start + 6 * body.floating
            for joint, dofs in zip(body.joints, body.joint_dofs, strict=True):
                if dofs == 1:
                    force[offset] += p.getJointState(body.body, joint, physicsClientId=client)[3]
                offset += dofs
        return force

"""The journal's five example systems in closed form (Halm & Posa, Sec. 5.4, App. A, Tables 4-8).

Every ``M`` and ``J`` is derived here from the geometry stated in the paper (RAMone's from
the data of :class:`RAMoneParameters`), never typed in: bodies are planar rigid bodies whose
points are written as ``origin + sum_i L_i u(theta_i)`` with ``u(theta) = (sin theta, -cos
theta)`` (a segment at angle ``theta`` from the downward vertical, counter-clockwise positive), and
``M = sum_b m_b Jc_b^T Jc_b + I_b w_b w_b^T`` (``Jc`` the centre-of-mass Jacobian, ``w`` the
body's angular-rate row).  The floor is ``y = 0`` with normal ``+y`` and g = 9.81.

Contact tangents are the normal turned clockwise, ``t = (n_y, -n_x)`` (``+x`` on the floor).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..core.problem import ImpactProblem

GRAVITY = 9.81


@dataclass(frozen=True)
class Example:
    """One of the journal's impact examples with its Table 4-8 settings.

    Attributes
    ----------
    name : str
    problem : ImpactProblem
        At the impact configuration.
    v_minus : ndarray, shape (nv,)
        Pre-impact velocity.
    step, max_steps, samples : float, int, int
        ``h``, ``N`` and ``M`` of Algorithms 1-2 (Tables 4-8).
    contact_names : tuple of str
        Contact labels as in the journal's figures.
    coordinates : tuple of str
        Names of the generalized coordinates (velocity entries).
    description : str
    configuration : ndarray, shape (nv,)
        The impact configuration ``q`` (the coordinates named in ``coordinates``).
    sequential_orders : tuple of tuple of int
        The sequential orders the journal compares against (Figs. 9-11).
    """

    name: str
    problem: ImpactProblem
    v_minus: np.ndarray
    step: float
    max_steps: int
    samples: int
    contact_names: tuple[str, ...]
    coordinates: tuple[str, ...]
    description: str
    configuration: np.ndarray
    sequential_orders: tuple[tuple[int, ...], ...] = field(default=((0, 1), (1, 0)))


@dataclass(frozen=True)
class Segment:
    """A term ``length * u(angle . q + offset)`` of a planar point."""

    length: float
    angle: np.ndarray  # (nv,) coefficients of the segment angle in q
    offset: float = 0.0


def _u(theta: float) -> np.ndarray:
    return np.array([np.sin(theta), -np.cos(theta)])


def _du(theta: float) -> np.ndarray:
    return np.array([np.cos(theta), np.sin(theta)])


def planar_point(q: np.ndarray, origin: int | None, segments: Sequence[Segment]) -> tuple[np.ndarray, np.ndarray]:
    """Position ``(2,)`` and Jacobian ``(2, nv)`` of ``(q[origin], q[origin+1]) + sum L u(theta)``.

    ``origin=None`` starts at the world origin.
    """
    nv = q.shape[0]
    position = np.zeros(2)
    jacobian = np.zeros((2, nv))
    if origin is not None:
        position += q[origin : origin + 2]
        jacobian[:, origin : origin + 2] = np.eye(2)
    for segment in segments:
        theta = float(segment.angle @ q) + segment.offset
        position += segment.length * _u(theta)
        jacobian += segment.length * np.outer(_du(theta), segment.angle)
    return position, jacobian


def body_offset(vector: np.ndarray, angle: np.ndarray, q: np.ndarray) -> Segment:
    """The segment reaching the world-frame ``vector`` from a body point at configuration ``q``.

    It rotates with the body (angle coefficients ``angle``), so its Jacobian is the rigid-body
    ``w x r`` term.
    """
    length = float(np.hypot(*vector))
    if length == 0.0:
        return Segment(0.0, angle)
    return Segment(length, angle, float(np.arctan2(vector[0], -vector[1]) - angle @ q))


@dataclass(frozen=True)
class Body:
    """A planar rigid body: mass, central inertia, centre-of-mass point, angular-rate row."""

    mass: float
    inertia: float
    origin: int | None
    segments: tuple[Segment, ...]
    angle: np.ndarray


def mass_matrix(q: np.ndarray, bodies: Sequence[Body]) -> np.ndarray:
    """``M = sum m Jc^T Jc + I w w^T`` over the bodies."""
    M = np.zeros((q.shape[0], q.shape[0]))
    for body in bodies:
        _, jc = planar_point(q, body.origin, body.segments)
        M += body.mass * jc.T @ jc + body.inertia * np.outer(body.angle, body.angle)
    return M


def contact_rows(normal: np.ndarray, relative_jacobian: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(Jn, Jt)`` rows of a contact with unit ``normal`` and tangent ``(n_y, -n_x)``."""
    normal = np.asarray(normal, dtype=float)
    tangent = np.array([normal[1], -normal[0]])
    return normal @ relative_jacobian, tangent @ relative_jacobian


def _problem(rows: Sequence[tuple[np.ndarray, np.ndarray]], M: np.ndarray, mu: float) -> ImpactProblem:
    Jn = np.array([row[0] for row in rows])
    Jt = np.array([row[1] for row in rows])[:, None, :]
    return ImpactProblem(M, Jn, Jt, mu)


def _unit(nv: int, index: int) -> np.ndarray:
    row = np.zeros(nv)
    row[index] = 1.0
    return row


def _box_corner(q: np.ndarray, corner: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Point and Jacobian of a body-frame ``corner`` of a free body with ``q = (x, y, theta)``."""
    theta = q[2]
    rotation = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
    return planar_point(q, 0, [body_offset(rotation @ corner, _unit(3, 2), q)])


def rocking_block(width: float = 1.0, height: float = 2.0, mass: float = 1.0, speed: float = 0.4429, mu: float = 1.0) -> Example:
    """A block falling flat onto two bottom corners (journal Figs. 1 and 9, Table 4).

    ``q = (x, y, theta)`` of the centre of mass; contacts A (left) and B (right) bottom
    corners; uniform density, ``I = m (w^2 + h^2) / 12``; ``v- = (0, -speed, 0)``.
    """
    q = np.array([0.0, height / 2.0, 0.0])
    inertia = mass * (width**2 + height**2) / 12.0
    M = np.diag([mass, mass, inertia])
    floor = np.array([0.0, 1.0])
    rows = [contact_rows(floor, _box_corner(q, np.array([side * width / 2.0, -height / 2.0]))[1]) for side in (-1.0, 1.0)]
    return Example(
        name="rocking_block",
        problem=_problem(rows, M, mu),
        v_minus=np.array([0.0, -speed, 0.0]),
        step=0.3,
        max_steps=10,
        samples=2**14,
        contact_names=("A", "B"),
        coordinates=("x", "y", "theta"),
        description="1 m x 2 m block lands flat on two corners (journal Fig. 9)",
        configuration=q,
    )


def compass_gait(
    leg_length: float = 1.0,
    mass_distance: float = 0.5,
    leg_mass: float = 1.0,
    leg_angle_deg: float = 78.0,
    leg_rate: float = 0.25,
    mu: float = 5.0,
) -> Example:
    """A compass-gait walker's wide step (journal Figs. 4 and 10, Table 5).

    ``q = (x_hip, y_hip, phi_leading, phi_trailing)``: a massless hip on x-y prismatic joints
    and two legs of length ``l`` with a point mass (zero inertia) ``mass_distance`` from the
    hip, angles from the downward vertical (leading ``-78 deg``, trailing ``+78 deg``).  The
    trailing foot B sits at the origin; both legs turn at ``leg_rate`` and the hip velocity
    is chosen so that B is at rest, hence A falls at ``2 l sin(78 deg) leg_rate``.
    """
    phi = np.deg2rad(leg_angle_deg)
    q = np.array([-leg_length * np.sin(phi), leg_length * np.cos(phi), -phi, phi])
    legs = {"leading": _unit(4, 2), "trailing": _unit(4, 3)}
    bodies = [Body(leg_mass, 0.0, 0, (Segment(mass_distance, angle),), angle) for angle in legs.values()]
    M = mass_matrix(q, bodies)
    feet = {name: planar_point(q, 0, [Segment(leg_length, angle)])[1] for name, angle in legs.items()}
    hip_velocity = -leg_length * _du(phi) * leg_rate  # trailing foot at rest
    floor = np.array([0.0, 1.0])
    return Example(
        name="compass_gait",
        problem=_problem([contact_rows(floor, feet["leading"]), contact_rows(floor, feet["trailing"])], M, mu),
        v_minus=np.array([*hip_velocity, leg_rate, leg_rate]),
        step=0.25,
        max_steps=5,
        samples=2**20,
        contact_names=("A", "B"),
        coordinates=("x_hip", "y_hip", "phi_leading", "phi_trailing"),
        description="compass gait's leading foot A strikes while trailing foot B rests (journal Fig. 10)",
        configuration=q,
    )


def box_wall(side: float = 1.0, mass: float = 1.0, angle_deg: float = 10.0, speed: float = 1.0, mu: float = 1.0) -> Example:
    """A tilted box sliding on one corner into a wall (journal Figs. 5 and 11, Table 6).

    ``q = (x, y, theta)``; the unit square is turned ``angle_deg`` clockwise, its lowest
    corner A on the floor and its rightmost corner B on the wall ``x = 0`` (normal ``-x``);
    ``v- = (speed, 0, 0)``: A slides, B collides.
    """
    theta = -np.deg2rad(angle_deg)
    rotation = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
    corners = [np.array([sx, sy]) * side / 2.0 for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
    world = np.array([rotation @ corner for corner in corners])
    lowest, rightmost = int(np.argmin(world[:, 1])), int(np.argmax(world[:, 0]))
    q = np.array([-world[rightmost, 0], -world[lowest, 1], theta])
    M = np.diag([mass, mass, mass * side**2 / 6.0])
    rows = [
        contact_rows(np.array([0.0, 1.0]), _box_corner(q, corners[lowest])[1]),
        contact_rows(np.array([-1.0, 0.0]), _box_corner(q, corners[rightmost])[1]),
    ]
    return Example(
        name="box_wall",
        problem=_problem(rows, M, mu),
        v_minus=np.array([speed, 0.0, 0.0]),
        step=2.0,
        max_steps=5,
        samples=2**18,
        contact_names=("A", "B"),
        coordinates=("x", "y", "theta"),
        description="box sliding on corner A hits a wall with corner B (journal Fig. 11)",
        configuration=q,
    )


@dataclass(frozen=True)
class RAMoneParameters:
    """RAMone's inertial and geometric data (Remy 2017, via the authors' public code)."""

    trunk_mass: float = 7.9026
    trunk_inertia: float = 0.08
    hip_offset: float = 0.137675
    thigh_mass: float = 0.7887
    thigh_inertia: float = 0.00221
    thigh_com: float = 0.019399
    thigh_length: float = 0.2
    shank_mass: float = 0.510
    shank_inertia: float = 0.00652
    shank_com: float = 0.165235
    shank_length: float = 0.2385
    foot_radius: float = 0.02815


def ramone(
    trunk_pitch_deg: float = 16.0,
    hip_deg: float = 70.0,
    leading_knee_deg: float = -2.0,
    pitch_rate: float = 1.0,
    mu: float = 1e5,
    parameters: RAMoneParameters | None = None,
) -> Example:
    """A footfall of the 5-link planar biped RAMone (journal Fig. 13, Table 7).

    ``q = (x, y, Phi, alpha_l, beta_l, alpha_t, beta_t)``: trunk position and pitch, then
    hip and knee angles of the leading and trailing legs.  Thigh angle from the downward
    vertical is ``Phi + alpha``, shank angle ``Phi + alpha + beta``; the hips sit
    ``hip_offset`` along the trunk's down axis.  Feet are massless disks on the shanks;
    contact points are their lowest points.  The trailing knee angle is solved so both feet
    touch the floor (-92.48 deg at the defaults); the trunk rotates at ``pitch_rate`` with
    joint rates zero and the trunk velocity chosen so that the trailing foot B is at rest.
    """
    p = parameters or RAMoneParameters()
    pitch, hip = np.deg2rad(trunk_pitch_deg), np.deg2rad(hip_deg)
    alpha_l, alpha_t, beta_l = -hip, hip, np.deg2rad(leading_knee_deg)
    leg_height = p.shank_length * np.cos(pitch + alpha_l + beta_l) + p.thigh_length * np.cos(pitch + alpha_l)
    shank_t = -np.arccos((leg_height - p.thigh_length * np.cos(pitch + alpha_t)) / p.shank_length)
    beta_t = shank_t - pitch - alpha_t
    y0 = leg_height + p.hip_offset * np.cos(pitch) + p.foot_radius
    q = np.array([0.0, y0, pitch, alpha_l, beta_l, alpha_t, beta_t])
    nv = 7
    trunk = _unit(nv, 2)
    bodies = [Body(p.trunk_mass, p.trunk_inertia, 0, (), trunk)]
    feet = []
    for alpha_index, beta_index in ((3, 4), (5, 6)):
        thigh = trunk + _unit(nv, alpha_index)
        shank = thigh + _unit(nv, beta_index)
        to_hip = Segment(p.hip_offset, trunk)
        bodies.append(Body(p.thigh_mass, p.thigh_inertia, 0, (to_hip, Segment(p.thigh_com, thigh)), thigh))
        to_knee = (to_hip, Segment(p.thigh_length, thigh))
        bodies.append(Body(p.shank_mass, p.shank_inertia, 0, (*to_knee, Segment(p.shank_com, shank)), shank))
        to_foot = (*to_knee, Segment(p.shank_length, shank))
        feet.append(planar_point(q, 0, [*to_foot, body_offset(np.array([0.0, -p.foot_radius]), shank, q)])[1])
    M = mass_matrix(q, bodies)
    floor = np.array([0.0, 1.0])
    problem = _problem([contact_rows(floor, foot) for foot in feet], M, mu)
    v = np.zeros(nv)
    v[2] = pitch_rate
    v[:2] = -feet[1][:, 2] * pitch_rate  # trailing foot B at rest
    return Example(
        name="ramone",
        problem=problem,
        v_minus=v,
        step=1.0,
        max_steps=10,
        samples=2**20,
        contact_names=("A", "B"),
        coordinates=("x", "y", "pitch", "hip_leading", "knee_leading", "hip_trailing", "knee_trailing"),
        description="RAMone biped's leading foot A strikes while trailing foot B rests (journal Fig. 13)",
        configuration=q,
    )


def disk_stack(radius: float = 1.0, mass: float = 1.0, speed: float = 1.0, mu: float = float(np.sqrt(3.0))) -> Example:
    """A disk dropped onto two resting disks (journal Fig. 14, Table 8).

    ``q = (x, y, theta)`` of the left, right and top disks, centred at ``(0, R)``, ``(2R, R)``
    and ``(R, R + sqrt(3) R)``; uniform disks, ``I = m R^2 / 2``.  Contacts: A left-ground,
    B right-ground, C top-left, D top-right, E left-right (normal towards the right disk);
    the top disk falls at ``speed``.
    """
    centres = np.array([[0.0, radius], [2.0 * radius, radius], [radius, radius * (1.0 + np.sqrt(3.0))]])
    q = np.zeros(9)
    for index, centre in enumerate(centres):
        q[3 * index : 3 * index + 2] = centre
    M = np.diag(np.tile([mass, mass, mass * radius**2 / 2.0], 3))

    def surface_point(disk: int, direction: np.ndarray) -> np.ndarray:
        return planar_point(q, 3 * disk, [body_offset(radius * direction, _unit(9, 3 * disk + 2), q)])[1]

    def disk_contact(upper: int, lower: int) -> tuple[np.ndarray, np.ndarray]:
        normal = (centres[upper] - centres[lower]) / np.linalg.norm(centres[upper] - centres[lower])
        return contact_rows(normal, surface_point(upper, -normal) - surface_point(lower, normal))

    down = np.array([0.0, -1.0])
    rows = [
        contact_rows(-down, surface_point(0, down)),
        contact_rows(-down, surface_point(1, down)),
        disk_contact(2, 0),
        disk_contact(2, 1),
        disk_contact(1, 0),
    ]
    v = np.zeros(9)
    v[7] = -speed
    return Example(
        name="disk_stack",
        problem=_problem(rows, M, mu),
        v_minus=v,
        step=1.0,
        max_steps=10,
        samples=2**20,
        contact_names=("A", "B", "C", "D", "E"),
        coordinates=tuple(f"{axis}_{disk}" for disk in ("left", "right", "top") for axis in ("x", "y", "theta")),
        description="top disk falls onto two resting disks (journal Fig. 14)",
        configuration=q,
        sequential_orders=((2, 3, 0, 1, 4), (3, 2, 1, 0, 4)),
    )


#: The examples by name.
EXAMPLES: dict[str, Callable[[], Example]] = {
    "rocking_block": rocking_block,
    "compass_gait": compass_gait,
    "box_wall": box_wall,
    "ramone": ramone,
    "disk_stack": disk_stack,
}


def example(name: str) -> Example:
    """The example called ``name`` (one of :data:`EXAMPLES`)."""
    try:
        return EXAMPLES[name]()
    except KeyError:
        raise ValueError(f"unknown example {name!r}; expected one of {sorted(EXAMPLES)}") from None

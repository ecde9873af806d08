"""Problem assembly: a contact set and the world model become an :class:`ImpactProblem`.

``Jn = n^T (J_A(p_A) - J_B(p_B))`` with the normal on B pointing to A (journal eq. 12),
tangent Jacobians from an orthonormal tangent pair per contact (or the one direction a
planar mechanism can slide along), ``M(q)`` from the configuration and ``mu`` from the
contacts.  Everything PyBullet-specific about an impact problem is decided here; the
laws see only the problem.
"""

from __future__ import annotations

import numpy as np
import pybullet as p

from ..core.problem import ImpactProblem
from .configuration import Configuration
from .contacts import Contact
from .frames import tangent_basis


def contact_problem(
    contacts: list[Contact],
    configuration: Configuration,
    friction_directions: int | None = None,
    restitution: np.ndarray | None = None,
    constraints: np.ndarray | None = None,
) -> tuple[ImpactProblem | None, list[Contact]]:
    """The impact problem of a contact set: ``M(q)``, normal and tangent Jacobians, ``mu`` and,
    when given, the coefficients of restitution (one per contact, see :func:`combined_restitution`)
    and the bilateral constraints' rows (:func:`~.constraints.constraint_rows`).

    Tangents are an orthonormal pair per contact.  When every contact's tangential Jacobian
    has rank one (a planar mechanism) the problem is planar, with the tangent along the one
    direction that can slide (its largest world component made positive).  Contacts with
    identical rows and friction (e.g. both corners of a planar block's edge) are merged:
    their friction cones add up to one cone, so the impact is the same.  A contact whose
    normal row is zero (a link that cannot move along the normal, e.g. on a fixed base) can
    neither collide nor separate, and its friction would have no bound: it is dropped.
    Returns the problem (None when no row is left) and the contacts behind its rows.
    """
    M = configuration.mass_matrix()
    normals = np.array([contact.normal for contact in contacts])
    jacobians = _side_jacobians(contacts, configuration, 0) - _side_jacobians(contacts, configuration, 1)
    tangents = _tangent_bases(normals)
    Jn = np.einsum("id,idv->iv", normals, jacobians)
    Jt = np.einsum("ikd,idv->ikv", tangents, jacobians)
    mu = np.array([contact.mu for contact in contacts])
    planar = planar_tangents(Jt, tangents)
    Jt = Jt if planar is None else planar
    elastic = restitution is not None and bool((restitution > 0.0).any())
    columns = [Jn, Jt.reshape(len(contacts), -1), mu[:, None]] + ([np.asarray(restitution)[:, None]] if elastic else [])
    rows = np.concatenate(columns, axis=1)
    scale = 1e-9 * (1.0 + np.abs(rows).max())
    moving = np.abs(Jn).max(axis=1) > 1e-12 * (1.0 + np.abs(Jn).max())
    keep = [i for i in range(len(contacts)) if moving[i] and not (np.abs(rows[i] - rows[:i]).max(axis=1) <= scale).any()]
    if not keep:
        return None, []
    problem = ImpactProblem(
        M,
        Jn[keep],
        Jt[keep],
        mu[keep],
        None if planar is not None else friction_directions,
        restitution=np.asarray(restitution)[keep] if elastic else None,
        constraints=constraints,
    )
    return problem, [contacts[i] for i in keep]


def _side_jacobians(contacts: list[Contact], configuration: Configuration, side: int) -> np.ndarray:
    """``J(p)`` ``(m, 3, nv)`` of every contact's point on its link A (``side`` 0) or B (1),
    one :meth:`~.configuration.Configuration.point_jacobian` call per moving link (zeros on a fixed one)."""
    rows: dict[tuple[int, int], list[int]] = {}
    for i, contact in enumerate(contacts):
        rows.setdefault(contact.pair[side], []).append(i)
    jacobians = np.empty((len(contacts), 3, configuration.model.nv))
    for (body, link), indices in rows.items():
        if configuration.fixed(body, link):
            jacobians[indices] = 0.0
            continue
        points = np.array([(contacts[i].position_a, contacts[i].position_b)[side] for i in indices])
        jacobians[indices] = configuration.point_jacobian(body, link, points)
    return jacobians


def combined_restitution(client: int, contacts: list[Contact]) -> np.ndarray:
    """Each contact's coefficient of restitution as Bullet combines it: the product of the two
    links' ``restitution`` (``getDynamicsInfo``, set by a URDF's ``<contact><restitution>`` or
    ``changeDynamics``), as ``btManifoldResult::calculateCombinedRestitution`` does; clipped
    to ``[0, 1]``, the range of Stronge's energetic coefficient."""
    values: dict[tuple[int, int], float] = {}
    for contact in contacts:
        for key in ((contact.body_a, contact.link_a), (contact.body_b, contact.link_b)):
            if key not in values:
                values[key] = float(p.getDynamicsInfo(key[0], key[1], physicsClientId=client)[5])
    combined = [values[(c.body_a, c.link_a)] * values[(c.body_b, c.link_b)] for c in contacts]
    return np.array([min(max(value, 0.0), 1.0) for value in combined], dtype=float)  # np.clip, on Python floats


def _tangent_bases(normals: np.ndarray) -> np.ndarray:
    """:func:`~.frames.tangent_basis` of every normal, ``(m, 2, 3)``."""
    return np.array([tangent_basis(normal) for normal in normals])


def planar_tangents(Jt: np.ndarray, tangents: np.ndarray) -> np.ndarray | None:
    """``(m, 1, nv)`` tangent Jacobians if every contact can slide along one direction only.

    A contact whose 2x2 Gram matrix ``G = Jt Jt^T`` has ``det G / tr G`` (a lower bound of
    ``sigma_2^2``, exact to ``eps tr G``) above ``1e-12 max(tr G, 1)`` has ``sigma_2`` far
    above the rank threshold: the problem is spatial without the SVD.
    """
    gram = Jt @ np.swapaxes(Jt, 1, 2)
    trace = gram[:, 0, 0] + gram[:, 1, 1]
    det = gram[:, 0, 0] * gram[:, 1, 1] - gram[:, 0, 1] * gram[:, 1, 0]
    if ((trace > 0.0) & (det > 1e-12 * trace * np.maximum(trace, 1.0))).any():
        return None
    u, singular, _ = np.linalg.svd(Jt)  # batched over the contacts; one singular value when nv = 1 (rank one)
    if singular.shape[1] > 1 and (singular[:, 1] > 1e-9 * np.maximum(singular[:, 0], 1.0)).any():
        return None
    direction = np.einsum("mk,mkd->md", u[:, :, 0], tangents)
    direction *= np.sign(direction[np.arange(len(direction)), np.argmax(np.abs(direction), axis=1)])[:, None]
    return np.einsum("md,mkd,mkv->mv", direction, tangents, Jt)[:, None, :]


def clusters(contacts: list[Contact], dynamic: set[int]) -> list[list[Contact]]:
    """Group contacts into impacts that share no dynamic body (``M`` is block-diagonal)."""
    groups: list[tuple[set[int], list[Contact]]] = []
    for contact in contacts:
        bodies = {b for b in (contact.body_a, contact.body_b) if b in dynamic}
        if not bodies:
            continue
        merged = [group for group in groups if group[0] & bodies]
        for group in merged:
            groups.remove(group)
            bodies |= group[0]
        groups.append((bodies, [c for group in merged for c in group[1]] + [contact]))
    return [group[1] for group in groups]

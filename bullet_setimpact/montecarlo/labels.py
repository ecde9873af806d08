"""Contact names for scenario outcomes: by link, by pair of bodies, by corner of a box.

A scenario's ``label_contact`` turns a :class:`~bullet_setimpact.bullet.contacts.Contact`
into a stable name ("A", "FR_toe", "floor:corner(+1,-1)") so that outcomes can be
classified per contact across rollouts; these are the shared pieces.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pybullet as p

from ..bullet.contacts import Contact
from ..bullet.frames import rotation_matrix


def in_link_frame(client: int, body: int, link: int, point: np.ndarray) -> np.ndarray:
    """World ``point`` in the frame of ``body``'s ``link`` (-1: the base), as PyBullet
    reports it (the link's inertial frame)."""
    if link < 0:
        origin, orientation = p.getBasePositionAndOrientation(body, physicsClientId=client)
    else:
        origin, orientation = p.getLinkState(body, link, computeForwardKinematics=True, physicsClientId=client)[:2]
    rotation = rotation_matrix(orientation)
    return rotation.T @ (np.asarray(point, dtype=float) - np.array(origin))


def link_label(client: int, body: int, contact: Contact, letters: Mapping[str, str] | None = None, base: str = "base") -> str:
    """``body``'s link in the contact by name (``base`` for the base), or its letter in ``letters``."""
    link = contact.side(body)[0]
    name = p.getJointInfo(body, link, physicsClientId=client)[12].decode() if link >= 0 else base
    return (letters or {}).get(name, name)


def pair_label(names: Mapping[int, str], letters: Mapping[frozenset[str], str], contact: Contact) -> str:
    """The letter of the unordered pair of named bodies in contact, else ``"<body>-<body>"``."""
    pair = (names.get(contact.body_a, str(contact.body_a)), names.get(contact.body_b, str(contact.body_b)))
    return letters.get(frozenset(pair), "-".join(sorted(pair)))


def bottom_corner_label(client: int, body: int, link: int, contact: Contact) -> str:
    """``"A"``/``"B"`` for the left/right bottom corner of a planar block (link frame x < 0 /
    x > 0, z < 0), ``"top-left"``/``"top-right"`` for the top ones."""
    local = in_link_frame(client, body, link, contact.side(body)[1])
    side = "A" if local[0] < 0.0 else "B"
    return side if local[2] < 0.0 else f"top-{'left' if side == 'A' else 'right'}"


#: The journal's disk-stack contact letters (Fig. 14) by the unordered pair of bodies.
DISK_STACK_LETTERS: dict[frozenset[str], str] = {
    frozenset({"left", "ground"}): "A",
    frozenset({"right", "ground"}): "B",
    frozenset({"top", "left"}): "C",
    frozenset({"top", "right"}): "D",
    frozenset({"left", "right"}): "E",
}

"""PyBullet adapter: model extraction (``M(q)``, world-frame point Jacobians) and velocity I/O.

See :mod:`bullet_setimpact.bullet.model` for the world velocity layout and the PyBullet
conventions it relies on.
"""

from __future__ import annotations

from .bodies import BodyModel, inspect_body
from .configuration import Configuration
from .frames import rotation_matrix
from .inventory import check_client
from .model import WorldModel
from .urdf import check_urdf

__all__ = ["BodyModel", "Configuration", "WorldModel", "check_client", "check_urdf", "inspect_body", "rotation_matrix"]

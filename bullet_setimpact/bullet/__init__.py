"""PyBullet adapter: model extraction (``M(q)``, world-frame point Jacobians) and velocity I/O.

See :mod:`bullet_setimpact.bullet.model` for the world velocity layout and the PyBullet
conventions it relies on.
"""

from __future__ import annotations

from .model import BodyModel, Configuration, WorldModel, check_client, inspect_body, rotation_matrix

__all__ = ["BodyModel", "Configuration", "WorldModel", "check_client", "inspect_body", "rotation_matrix"]

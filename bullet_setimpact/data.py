"""Where the shipped URDFs and scenario scripts are, from a clone or from an installed wheel.

The repository keeps them at its top (``urdf/``, ``scenarios/``); the wheel carries the same
files inside the package, as ``bullet_setimpact/_data/urdf`` and ``bullet_setimpact/_data/scenarios``
(``pyproject.toml`` maps those package directories onto the top-level ones).  :func:`data_path`
finds whichever is there, in the spirit of ``pybullet_data.getDataPath()``.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
#: What :func:`data_path` can return: the URDFs and the scenario scripts.
KINDS = ("urdf", "scenarios")


def data_path(kind: str = "urdf") -> str:
    """Absolute directory of the shipped URDFs (``"urdf"``, the default) or scenario scripts (``"scenarios"``).

    ``p.setAdditionalSearchPath(data_path())`` then lets ``p.loadURDF("ground_box.urdf")`` find
    the box ground from any working directory.  An installed wheel's copy is preferred to the
    repository's top-level directory (a clone, or an editable install).
    """
    if kind not in KINDS:
        raise ValueError(f"data_path kind must be one of {KINDS}, got {kind!r}")
    installed = _PACKAGE / "_data" / kind
    return str(installed if installed.is_dir() else _PACKAGE.parent / kind)

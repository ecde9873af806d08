"""Checking a URDF file before PyBullet loads it.

PyBullet's importer accepts much that is wrong: a missing mesh becomes no shape, a link
without ``<inertial>`` gets 1 kg, a truncated file may load half a robot.  :func:`check_urdf`
refuses such files with a ``ValueError`` naming the file and the problem: not well-formed
XML (e.g. truncated), not a ``<robot>``, a malformed link or joint, a mesh that does not
exist (looked for beside the URDF, in its ancestors' directories for ``package://`` names,
and in ``pybullet_data``), no collision geometry, or no link that could move having a
positive mass (links without ``<inertial>`` have no mass, the URDF convention).
:func:`resolve_urdf` finds a file by path, in the project's ``urdf/`` or in ``pybullet_data``.
"""

from __future__ import annotations

import math
import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pybullet_data

from .examples import URDF_DIR

#: Joint types PyBullet's URDF importer knows (``spherical`` is its extension).
JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar", "spherical")
#: Mesh formats PyBullet's URDF importer reads.
MESH_SUFFIXES = (".obj", ".stl", ".dae", ".cdf")


@dataclass(frozen=True)
class UrdfSummary:
    """What the pre-load check learned about a URDF file.

    Attributes
    ----------
    path : Path
        The resolved file.
    robot : str
        The ``<robot name=...>``.
    root : str
        The root link (the one link that is no joint's child).
    masses : dict of str to float or None
        Each link's ``<inertial><mass>``, None where it has none.
    movable_mass : float
        Total mass of the links that could move (base free or below a non-fixed joint).
    meshes : tuple of Path
        Every mesh file it references, resolved.
    """

    path: Path
    robot: str
    root: str
    masses: dict[str, float | None]
    movable_mass: float
    meshes: tuple[Path, ...]


def resolve_urdf(name: str) -> Path:
    """The URDF file ``name`` stands for: a path (absolute, or relative to the working
    directory), else a file in the project's ``urdf/``, else a file in ``pybullet_data``.

    Raises
    ------
    ValueError
        Naming ``name`` and every place it was looked for.
    """
    if not name.strip():
        raise ValueError("parameter 'urdf' must name a URDF file, got an empty string")
    data = Path(pybullet_data.getDataPath())
    candidates = [Path(name).expanduser(), URDF_DIR / name, data / name]
    for candidate in candidates:
        if candidate.is_file():
            return candidate.resolve()
    if Path(name).expanduser().exists():
        raise ValueError(f"URDF {name!r} is not a file")
    raise ValueError(f"URDF file {name!r} not found: looked for it as a path, in {URDF_DIR} and in pybullet_data ({data})")


def mesh_candidates(filename: str, urdf_dir: Path) -> list[Path]:
    """Where PyBullet looks for a ``<mesh filename=...>`` (Bullet's ``UrdfFindMeshFile``): a
    ``package://`` or ``model://`` prefix is dropped, then the name is tried under the URDF's
    directory and each of its ancestors, under the working directory and its parent and
    grandparent, and as given."""
    for prefix in ("package://", "model://"):
        if filename.startswith(prefix):
            filename = filename[len(prefix) :]
            break
    here = Path.cwd()
    bases = [urdf_dir, *urdf_dir.parents, here, here.parent, here.parent.parent]
    return [base / filename for base in bases] + [Path(filename)]


def _mass(path: Path, link: ET.Element) -> float | None:
    """A link's ``<inertial><mass value=...>`` (None if it has none), checked to be >= 0."""
    element = link.find("inertial/mass")
    if element is None:
        return None
    text = element.get("value")
    try:
        mass = float(text)  # type: ignore[arg-type]  # None is refused right below
    except (TypeError, ValueError):
        raise ValueError(f"URDF {path}: link {link.get('name')!r} has a mass that is not a number ({text!r})") from None
    if not math.isfinite(mass) or mass < 0.0:
        raise ValueError(f"URDF {path}: link {link.get('name')!r} has mass {text!r}; expected a finite number >= 0")
    return mass


def check_urdf(path: str | os.PathLike[str], fixed_base: bool) -> UrdfSummary:
    """Check a URDF file before PyBullet loads it (see the module docstring for the list).

    A link could move if the base is free (not ``fixed_base``, and the root's mass is not
    an explicit 0, which PyBullet takes as a static base), or if it hangs below a
    non-fixed joint; at least one such link must have a positive mass.

    Raises
    ------
    ValueError
        Naming the file and the problem.
    """
    path = Path(path)
    try:
        text = path.read_bytes()
    except OSError as exc:
        raise ValueError(f"URDF {path} cannot be read: {exc}") from None
    # PyBullet's TinyXML accepts blank lines before the XML declaration and NUL padding
    # after the document (pybullet_data's humanoid.urdf has both kinds); so does this check.
    body = text.lstrip()
    skipped_lines = text[: len(text) - len(body)].count(b"\n")
    try:
        root_element = ET.fromstring(body.rstrip(b"\x00 \t\r\n"))
    except ET.ParseError as exc:
        line, column = exc.position
        raise ValueError(
            f"URDF {path} is not well-formed XML (line {line + skipped_lines}, column {column}: {str(exc).split(':')[0]}); "
            "is the file truncated?"
        ) from None
    if root_element.tag != "robot":
        raise ValueError(f"URDF {path} has root element <{root_element.tag}>; expected <robot>")
    links = root_element.findall("link")
    names = [link.get("name") for link in links]
    if not links or any(not name for name in names):
        raise ValueError(f"URDF {path} must have at least one <link>, each with a name")
    masses = {str(link.get("name")): _mass(path, link) for link in links}
    parents: dict[str, tuple[str, str]] = {}  # child -> (parent, joint type)
    for joint in root_element.findall("joint"):
        parent, child = joint.find("parent"), joint.find("child")
        ends = (None if parent is None else parent.get("link"), None if child is None else child.get("link"))
        if ends[0] not in masses or ends[1] not in masses:
            raise ValueError(
                f"URDF {path}: joint {joint.get('name')!r} connects {ends[0]!r} to {ends[1]!r}, which are not both links of the file"
            )
        kind = joint.get("type")
        if kind not in JOINT_TYPES:
            raise ValueError(f"URDF {path}: joint {joint.get('name')!r} has type {kind!r}; expected one of {JOINT_TYPES}")
        if kind in ("revolute", "prismatic") and joint.find("limit") is None:
            raise ValueError(f"URDF {path}: {kind} joint {joint.get('name')!r} has no <limit> (the URDF format requires one)")
        parents[str(ends[1])] = (str(ends[0]), kind)
    roots = [name for name in masses if name not in parents]
    if len(roots) != 1:
        raise ValueError(f"URDF {path}: the links must form one tree, but {roots or 'none'} have no parent joint")
    root = roots[0]

    meshes = []
    for link in links:
        for mesh in link.findall("visual/geometry/mesh") + link.findall("collision/geometry/mesh"):
            filename = mesh.get("filename") or ""
            if Path(filename).suffix.lower() not in MESH_SUFFIXES:
                raise ValueError(
                    f"URDF {path}: link {link.get('name')!r} references mesh {filename!r}; PyBullet reads only "
                    f"{', '.join(MESH_SUFFIXES)} files"
                )
            found = next((c for c in mesh_candidates(filename, path.parent) if c.is_file()), None)
            if found is None:
                raise ValueError(
                    f"URDF {path}: link {link.get('name')!r} references mesh {filename!r}, which does not exist "
                    "(looked for it as PyBullet does: beside the URDF, in its ancestors and the working directory)"
                )
            meshes.append(found.resolve())
    if not root_element.findall("link/collision"):
        raise ValueError(f"URDF {path} has no <collision> geometry: the body would fall through the ground")

    free_base = not fixed_base and masses[root] != 0.0

    def could_move(name: str) -> bool:
        if name == root:
            return free_base
        parent, kind = parents[name]
        return kind != "fixed" or could_move(parent)

    movable_mass = sum(mass or 0.0 for name, mass in masses.items() if could_move(name))
    if movable_mass <= 0.0:
        listed = ", ".join(f"{name}: {'no <inertial> mass' if mass is None else mass}" for name, mass in masses.items())
        base = "the base is fixed" if fixed_base else ("the root link's mass 0 makes PyBullet fix the base" if masses[root] == 0.0 else "")
        raise ValueError(
            f"URDF {path}: nothing could move: every link that could move has zero or no mass ({listed}{'; ' + base if base else ''})"
        )
    return UrdfSummary(path, str(root_element.get("name", "")), root, masses, movable_mass, tuple(meshes))

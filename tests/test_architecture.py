"""The package's layout and import graph, read with ``ast`` (no module is executed): it has no
cycle, no module imports the command-line front end (``cli`` only imports down), the layers
below the PyBullet adapter (``core``, ``laws``, ``analysis``) reach no PyBullet through any
chain of imports, and the package top stays small (the rest lives in capability packages)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import bullet_setimpact

PACKAGE_DIR = Path(bullet_setimpact.__file__).parent
#: Data shipped inside an installed wheel (the scenario scripts under ``_data``): not package modules.
DATA_DIR = PACKAGE_DIR / "_data"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_modules() -> dict[str, Path]:
    """Dotted module name -> source file, for every module of the package (shipped data excluded)."""
    return {module_name(path): path for path in PACKAGE_DIR.rglob("*.py") if DATA_DIR not in path.parents}


def third_party_imports(path: Path) -> set[str]:
    """The top-level names of the absolute imports in ``path`` (``pybullet``, ``numpy``, ...)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.partition(".")[0])
    return names


def import_graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports explicitly (module level or inside functions).

    ``from X import name`` adds ``X`` and, when ``X.name`` is a module, ``X.name`` too; a
    relative import is resolved against the importing module's package.  Edges to the
    module's own ancestor packages are left out: Python initializes those first anyway, so
    ``from . import sibling`` depends on the sibling, not on the package."""
    paths = package_modules()
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                edges.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                edges.add(base)
                edges.update(f"{base}.{alias.name}" for alias in node.names)
        ancestors = {".".join(name.split(".")[:depth]) for depth in range(1, name.count(".") + 1)}
        graph[name] = {edge for edge in edges if edge in paths and edge != name and edge not in ancestors}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a list of modules, or None (depth-first search)."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return [*stack[stack.index(target) :], target]
            if target not in state and (cycle := visit(target)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_import_graph_sees_the_known_edges() -> None:
    """Guard against a vacuous graph: the CLI imports the scenario module, and the Routh
    law imports the impact problem (both true by construction of the package)."""
    graph = import_graph()
    assert "bullet_setimpact.montecarlo.scenario" in graph["bullet_setimpact.cli"]
    assert "bullet_setimpact.core.problem" in graph["bullet_setimpact.laws.routh"]


def test_the_package_has_no_import_cycle() -> None:
    assert find_cycle(import_graph()) is None


def test_find_cycle_finds_a_planted_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_no_module_imports_the_cli() -> None:
    importers = sorted(name for name, edges in import_graph().items() if "bullet_setimpact.cli" in edges)
    assert importers == []


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module ``start`` imports, directly or through a chain of imports (``start`` included)."""
    seen = {start}
    stack = [start]
    while stack:
        for target in graph[stack.pop()] - seen:
            seen.add(target)
            stack.append(target)
    return seen


PYBULLET_FREE_LAYERS = ("bullet_setimpact.core", "bullet_setimpact.laws", "bullet_setimpact.analysis")


def test_core_laws_and_analysis_reach_no_pybullet() -> None:
    """No module of the layers below the adapter imports ``pybullet`` (or ``pybullet_data``,
    ``pybullet_utils``), itself or through any module it imports: a law sees only an
    ``ImpactProblem``.  The package ``__init__`` files above them are left out of the chain, as
    in :func:`import_graph` (they are the public entry point, not a dependency of the layer)."""
    graph = import_graph()
    paths = package_modules()
    layer_modules = [name for name in graph if name.startswith(PYBULLET_FREE_LAYERS)]
    assert len(layer_modules) >= 15  # guard: the layers were found
    offenders = {
        name: sorted(
            dep for dep in reachable(graph, name) if third_party_imports(paths[dep]) & {"pybullet", "pybullet_data", "pybullet_utils"}
        )
        for name in layer_modules
    }
    assert {name: deps for name, deps in offenders.items() if deps} == {}


def test_the_pybullet_check_sees_an_import_through_a_chain() -> None:
    """The reachability the layer check relies on follows chains: a -> b -> c reaches c."""
    assert reachable({"a": {"b"}, "b": {"c"}, "c": set(), "d": {"a"}}, "a") == {"a", "b", "c"}


def test_the_package_top_holds_at_most_twelve_modules() -> None:
    """The rest is grouped by capability: core, laws, analysis, bullet, montecarlo, viz."""
    top = sorted(path.name for path in PACKAGE_DIR.glob("*.py"))
    assert len(top) <= 12, top
    assert {"core", "laws", "analysis", "bullet", "montecarlo", "viz"} <= {path.name for path in PACKAGE_DIR.iterdir() if path.is_dir()}


@pytest.mark.subprocess
def test_the_core_runs_where_pybullet_cannot_be_imported() -> None:
    """With ``pybullet`` unimportable, ``import bullet_setimpact`` and every module of the layers
    below the adapter import, and the rocking block's outcome set is computed; the adapter's
    names fail only when used, naming pybullet."""
    modules = sorted(name for name in import_graph() if name.startswith(PYBULLET_FREE_LAYERS))
    code = (
        "import importlib, sys\n"
        "sys.modules['pybullet'] = None\n"
        "import bullet_setimpact\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "from bullet_setimpact import RouthImpact, planar\n"
        "example = planar.rocking_block()\n"
        "outcomes = RouthImpact(example.step, example.max_steps).outcome_set(example.problem, example.v_minus, 64, rng=0)\n"
        "assert outcomes.shape[1] == 3, outcomes.shape\n"
        "try:\n"
        "    bullet_setimpact.ImpactSimulator\n"
        "except ImportError as error:\n"
        "    assert 'pybullet' in str(error), error\n"
        "else:\n"
        "    raise AssertionError('ImpactSimulator imported without pybullet')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=PACKAGE_DIR.parent, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr

"""The package's import graph, read with ``ast`` (no module is executed): it has no cycle, and
no module imports the command-line front end (``cli`` only imports down)."""

from __future__ import annotations

import ast
from pathlib import Path

import bullet_setimpact

PACKAGE_DIR = Path(bullet_setimpact.__file__).parent
#: Data shipped inside an installed wheel (the scenario scripts under ``_data``): not package modules.
DATA_DIR = PACKAGE_DIR / "_data"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports explicitly (module level or inside functions).

    ``from X import name`` adds ``X`` and, when ``X.name`` is a module, ``X.name`` too; a
    relative import is resolved against the importing module's package.  Edges to the
    module's own ancestor packages are left out: Python initializes those first anyway, so
    ``from . import sibling`` depends on the sibling, not on the package."""
    paths = {module_name(path): path for path in PACKAGE_DIR.rglob("*.py") if DATA_DIR not in path.parents}
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
    assert "bullet_setimpact.scenario" in graph["bullet_setimpact.cli"]
    assert "bullet_setimpact.problem" in graph["bullet_setimpact.laws.routh"]


def test_the_package_has_no_import_cycle() -> None:
    assert find_cycle(import_graph()) is None


def test_find_cycle_finds_a_planted_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_no_module_imports_the_cli() -> None:
    importers = sorted(name for name, edges in import_graph().items() if "bullet_setimpact.cli" in edges)
    assert importers == []

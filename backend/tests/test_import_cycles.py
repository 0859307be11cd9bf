"""No import cycle between modules of pronghorn.

Every import a module executes counts, at module level or inside a function (a lazy import
is still a dependency, and one that hides a cycle breaks the first time the order changes).
Imports under `if TYPE_CHECKING:` do not count: they never run.

Between top-level packages (pronghorn.agent, pronghorn.subagents, ...) there is no cycle
either, and there type-only imports count too: two packages that need each other's types
are one package, or one of them holds a type that belongs in the other.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "pronghorn"


def _module_name(path: Path, src: Path) -> str:
    parts = ["pronghorn", *path.relative_to(src).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


class _Imports(ast.NodeVisitor):
    """The import statements of a module that can run (all but TYPE_CHECKING blocks), or
    all of them with `type_only`."""

    def __init__(self, *, type_only: bool = False) -> None:
        self.found: list[ast.Import | ast.ImportFrom] = []
        self.type_only = type_only

    def visit_If(self, node: ast.If) -> None:
        if _is_type_checking(node.test) and not self.type_only:
            for stmt in node.orelse:
                self.visit(stmt)
        else:
            self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        self.found.append(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self.found.append(node)


def _known(name: str, modules: set[str]) -> str | None:
    """The pronghorn module `name` loads: itself, or the package that defines it."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def import_graph(src: Path = SRC, *, type_only: bool = False) -> dict[str, set[str]]:
    """Each pronghorn module -> the pronghorn modules it imports (with `type_only`, also
    those imported under TYPE_CHECKING)."""
    paths = {_module_name(p, src): p for p in src.rglob("*.py")}
    modules = set(paths)
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        visitor = _Imports(type_only=type_only)
        visitor.visit(ast.parse(path.read_text(encoding="utf-8")))
        targets: list[str] = []
        for node in visitor.found:
            if isinstance(node, ast.Import):
                targets.extend(alias.name for alias in node.names)
                continue
            parts = package.split(".")
            base = parts[: len(parts) - node.level + 1] if node.level else []
            origin = ".".join([*base, *([node.module] if node.module else [])])
            for alias in node.names:  # `from pkg import submodule` loads the submodule
                sub = f"{origin}.{alias.name}"
                targets.append(sub if sub in modules else origin)
        deps = {_known(t, modules) for t in targets if t.startswith("pronghorn")}
        graph[name] = {d for d in deps if d is not None and d != name}
    return graph


def top_level_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Each top-level pronghorn package (or module) -> the others its modules import."""

    def top(module: str) -> str:
        return ".".join(module.split(".")[:2])

    packages: dict[str, set[str]] = {}
    for module, deps in graph.items():
        packages.setdefault(top(module), set()).update(top(d) for d in deps)
    return {name: deps - {name} for name, deps in packages.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, todo = work[-1]
            if todo:
                nxt = todo.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph.get(nxt, set()))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycles() -> None:
    graph = import_graph()
    found = cycles(graph)
    report = [" ; ".join(f"{m} -> {sorted(graph[m] & set(c))}" for m in c) for c in found]
    assert not found, "import cycles:\n" + "\n".join(report)


def test_no_cycles_between_top_level_packages() -> None:
    """Top-level packages do not lean on each other even for types (the layers)."""
    graph = top_level_graph(import_graph(type_only=True))
    found = cycles(graph)
    report = [" ; ".join(f"{m} -> {sorted(graph[m] & set(c))}" for m in c) for c in found]
    assert not found, "package cycles (type-only imports included):\n" + "\n".join(report)


def test_the_check_sees_a_cycle(tmp_path: Path) -> None:
    """The check itself: a lazy import closing a loop counts; a TYPE_CHECKING one does not."""
    pkg = tmp_path / "pronghorn"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pronghorn.b import B\n")
    (pkg / "b.py").write_text("def f():\n    from pronghorn import a\n")
    (pkg / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pronghorn.a import A\n"
    )
    (pkg / "d.py").write_text("from .c import x\nfrom . import e\n")
    (pkg / "e.py").write_text("")
    graph = import_graph(pkg)
    assert graph["pronghorn.c"] == set()
    assert graph["pronghorn.d"] == {"pronghorn.c", "pronghorn.e"}
    assert cycles(graph) == [["pronghorn.a", "pronghorn.b"]]


def test_the_package_check_sees_a_type_only_cycle(tmp_path: Path) -> None:
    """Two packages whose modules import each other's, one of them only for types."""
    root = tmp_path / "pronghorn"
    for pkg in ("agent", "subagents"):
        (root / pkg).mkdir(parents=True)
        (root / pkg / "__init__.py").write_text("")
    (root / "__init__.py").write_text("")
    (root / "agent" / "state.py").write_text("")
    (root / "agent" / "builder.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from pronghorn.subagents.pool import Pool\n"
    )
    (root / "subagents" / "pool.py").write_text("from pronghorn.agent.state import State\n")
    assert cycles(import_graph(root)) == []
    graph = top_level_graph(import_graph(root, type_only=True))
    assert graph["pronghorn.agent"] == {"pronghorn.subagents"}
    assert cycles(graph) == [["pronghorn.agent", "pronghorn.subagents"]]


def package_of(module: str, packages: set[str]) -> str:
    """The package a module belongs to (a package is its own)."""
    return module if module in packages else module.rpartition(".")[0]


def package_graph(graph: dict[str, set[str]], src: Path = SRC) -> dict[str, set[str]]:
    """Each package -> the packages its modules import. A package importing its own
    sub-packages is how a package is built, so that edge is left out; every other one counts
    (a sub-package reaching back into its parent's modules included)."""
    packages = {
        name for name in graph if (src.joinpath(*name.split(".")[1:]) / "__init__.py").exists()
    }
    result: dict[str, set[str]] = {package_of(m, packages): set() for m in graph}
    for module, deps in graph.items():
        mine = package_of(module, packages)
        for dep in deps:
            theirs = package_of(dep, packages)
            if theirs != mine and not theirs.startswith(mine + "."):
                result[mine].add(theirs)
    return result


def test_no_import_cycles_between_packages() -> None:
    """The rooms of the tree (docs/architecture.md): no two packages import each other,
    directly or round a loop, e.g. runtime.engine -> runtime.cluster -> runtime.engine."""
    graph = import_graph()
    packages = package_graph(graph)
    found = cycles(packages)
    report = [" ; ".join(f"{p} -> {sorted(packages[p] & set(c))}" for p in c) for c in found]
    assert not found, "package import cycles:\n" + "\n".join(report)


def test_the_package_check_sees_a_loop(tmp_path: Path) -> None:
    pkg = tmp_path / "pronghorn"
    for sub in ("", "low", "high", "high/inner"):
        (pkg / sub).mkdir(exist_ok=True)
        (pkg / sub / "__init__.py").write_text(
            "from pronghorn.high import inner\n" if sub == "high" else ""
        )
    (pkg / "low" / "a.py").write_text("def f():\n    from pronghorn.high.inner import b\n")
    (pkg / "high" / "inner" / "b.py").write_text("from pronghorn.high import c\n")
    (pkg / "high" / "c.py").write_text("from pronghorn.low import a\n")
    packages = package_graph(import_graph(pkg), pkg)
    assert packages["pronghorn.high"] == {"pronghorn.low"}  # its own sub-package left out
    assert packages["pronghorn.high.inner"] == {"pronghorn.high"}
    assert cycles(packages) == [["pronghorn.high", "pronghorn.high.inner", "pronghorn.low"]]

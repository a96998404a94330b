"""No import goes in a circle, and no consumer of the shared state imports a back end.

Read from the source with `ast` (nothing is imported). An edge A → B is an import statement in A that names B;
importing a.b.c also runs the packages a and a.b first, so those are edges too, except the packages A sits in
(they are already running when A is imported). Imports under `if TYPE_CHECKING:` never run and are left out.

Two strengths:

- module-level imports (what runs when a module is imported) across all of guardian_proxy: no circle;
- every import, those inside functions too (the lazy ones), for the packages whose layering this checks:
  state, overrides and policy (and what imports them back). Other packages still have circles through
  lazy imports (cli ↔ dashboard ↔ mitm, bodies, chatapi: reported, not owned here), so the strict check is
  restricted to circles that pass through these packages.

And the rule of guardian_proxy/state: a consumer opens a back end through a factory of guardian_proxy.state
(`open_sessions`, `open_overrides`, `open_policies`, `open_feed`, `open_scratch`) and never imports one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import guardian_proxy

SRC = Path(guardian_proxy.__file__).resolve().parent
STRICT = ("guardian_proxy.state", "guardian_proxy.overrides", "guardian_proxy.policy")
BACK_ENDS = ("_local", "_redis", "_sqlite")


def _imports(tree: ast.Module, lazy: bool):
    """The import statements that run when the module is imported (lazy: those inside functions too)."""
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if not lazy and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
            continue
        stack.extend(ast.iter_child_nodes(node))


def import_graph(src: Path, lazy: bool = False) -> dict[str, set[str]]:
    """module → the modules of the same top package it imports (see the module's docstring)."""
    top = src.name
    files = {}
    for f in sorted(src.rglob("*.py")):
        parts = f.relative_to(src.parent).with_suffix("").parts
        files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    graph: dict[str, set[str]] = {m: set() for m in files}
    for mod, f in files.items():
        package = mod if f.name == "__init__.py" else mod.rpartition(".")[0]
        for node in _imports(ast.parse(f.read_text(encoding="utf-8")), lazy):
            targets = []
            if isinstance(node, ast.Import):
                for alias in node.names:
                    name = alias.name
                    while name and name not in files:
                        name = name.rpartition(".")[0]
                    targets += [name] if name else []
            else:
                base = node.module or ""
                if node.level:
                    base = package
                    for _ in range(node.level - 1):
                        base = base.rpartition(".")[0]
                    base = f"{base}.{node.module}" if node.module else base
                if base.split(".")[0] != top:
                    continue
                targets += [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names]
            for target in targets:
                up = target
                while up:  # the target, then the packages importing it runs first
                    if up in files and up != mod and not mod.startswith(up + "."):
                        graph[mod].add(up)
                    up = up.rpartition(".")[0]
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def _listed(found: list[list[str]]) -> str:
    return "\n".join(" ↔ ".join(c) for c in found)


def test_no_module_level_import_circle_in_guardian_proxy():
    found = circles(import_graph(SRC))
    assert not found, "module-level import circles:\n" + _listed(found)


def test_no_import_circle_through_state_overrides_or_policy_even_lazily():
    found = [c for c in circles(import_graph(SRC, lazy=True))
             if any(m == p or m.startswith(p + ".") for m in c for p in STRICT)]
    assert not found, "import circles (function-level imports included):\n" + _listed(found)


def test_consumers_open_a_back_end_through_a_factory_never_by_import():
    graph = import_graph(SRC, lazy=True)
    bad = [f"{m} imports {t}" for m, ts in graph.items() if not m.startswith("guardian_proxy.state")
           for t in sorted(ts) if t.startswith("guardian_proxy.state.") and t.endswith(BACK_ENDS)]
    assert not bad, bad


def _package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_the_checks_find_a_made_up_circle(tmp_path):
    pkg = _package(tmp_path / "pkg", {
        "__init__.py": "",
        "a.py": "from .b import x\n",
        "b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import y\n"
                "def f():\n    from . import c\n",
        "c.py": "from pkg.b import x\n",
        "sub/__init__.py": "from .d import z\n",  # importing pkg.sub.d runs pkg.sub first, which imports d
        "sub/d.py": "import pkg.e\n",
        "e.py": "from .sub.d import z\n",
    })
    eager, lazy = import_graph(pkg), import_graph(pkg, lazy=True)
    assert eager["pkg.a"] == {"pkg.b"} and eager["pkg.b"] == set()  # TYPE_CHECKING and function bodies: no
    assert eager["pkg.e"] == {"pkg.sub", "pkg.sub.d"}
    assert circles(eager) == [["pkg.e", "pkg.sub", "pkg.sub.d"]]
    assert circles(lazy) == [["pkg.b", "pkg.c"], ["pkg.e", "pkg.sub", "pkg.sub.d"]]

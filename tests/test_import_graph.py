"""The package's import graph: every module imports, and no two modules import each other.

The graph is read from the sources with :mod:`ast`, so an import inside a function or
under ``if TYPE_CHECKING:`` counts as much as one at the top of a module: a cycle is a
cycle whether Python happens to tolerate it at run time or not.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1] / "navqa"


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The navqa modules ``name`` imports anywhere in its source."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            # ``from pkg import sub`` imports the submodule ``pkg.sub`` when there is one
            targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in MODULES else module
                       for a in node.names]
        else:
            continue
        found |= {t for t in targets if t in MODULES and t != name}
    return found


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_import_graph_has_no_cycle() -> None:
    graph = {name: _imports(name, path) for name, path in MODULES.items()}
    # the walker sees what it must: the pipeline's own imports and a function-level one
    assert "navqa.online.strategies" in graph["navqa.online.pipeline"]
    assert "navqa.evaluation.report" in graph["navqa.evaluation.runner"]
    cycles = _cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(
        " <-> ".join(c) + "\n  " + "\n  ".join(f"{a} -> {sorted(graph[a] & set(c))}"
                                              for a in c) for c in cycles)


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_strategies_do_not_import_the_pipeline() -> None:
    """They are written against ``Stages`` and ``AskState`` (the pipeline looks them up)."""
    pipeline = "navqa.online.pipeline"
    for name in ("navqa.online.baselines", "navqa.online.saga.agent", "navqa.online.saga.repair",
                 "navqa.online.saga.tools"):
        assert pipeline not in _imports(name, MODULES[name]), name
    for name in ("navqa.online.baselines", "navqa.online.saga.agent",
                 "navqa.online.saga.repair"):
        assert name not in _imports(pipeline, MODULES[pipeline]), name


def _private_imports(name: str, source: str) -> list[str]:
    """The ``_private`` names ``name`` imports from another navqa module (absolute or relative)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (
                node.level or (node.module or "").startswith("navqa")):
            out += [f"{name}: {'.' * node.level}{node.module or ''}.{a.name}" for a in node.names
                    if a.name.startswith("_") and not a.name.startswith("__")]
    return out


def test_no_private_name_is_imported_across_modules() -> None:
    offenders = [o for name, path in MODULES.items()
                 for o in _private_imports(name, path.read_text(encoding="utf-8"))]
    assert not offenders, offenders


def test_the_private_import_finder_finds_one() -> None:
    src = "from navqa.model.template import IriTemplate, _tokens\nfrom .x import _y, __all__\n"
    assert _private_imports("m", src) == ["m: navqa.model.template._tokens", "m: .x._y"]


@pytest.mark.parametrize("name", sorted(n for n in MODULES if not n.endswith("__main__")))
def test_every_module_imports(name: str) -> None:
    importlib.import_module(name)

"""There is one table of XSD datatypes (:mod:`navqa.model.xsd`): no other module of navqa
spells a set, list or map of datatype IRIs, or the XSD namespace, itself."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).parents[2] / "navqa"
XSD_NS = "http://www.w3.org/2001/XMLSchema#"
OWNERS = {"navqa/model/xsd.py", "navqa/model/iri.py"}


def _is_xsd_iri(node: ast.AST) -> bool:
    """``XSD + "date"`` / ``_XSD + t`` or a string constant in the XSD namespace."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.startswith(XSD_NS)
    return (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)
            and isinstance(node.left, ast.Name) and node.left.id.lstrip("_") == "XSD")


def xsd_collections(source: str) -> list[int]:
    """Lines where ``source`` builds a collection of XSD datatype IRIs or spells the XSD
    namespace: a set/list/tuple/dict literal with two XSD IRIs, a comprehension producing
    them, or the namespace string itself."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Set | ast.List | ast.Tuple):
            elts = list(node.elts)
        elif isinstance(node, ast.Dict):
            elts = [k for k in node.keys if k is not None] + list(node.values)
        elif isinstance(node, ast.SetComp | ast.ListComp | ast.GeneratorExp | ast.DictComp):
            elts = [node.key if isinstance(node, ast.DictComp) else node.elt] * 2
        elif isinstance(node, ast.Constant) and node.value == XSD_NS:
            lines.append(node.lineno)
            continue
        else:
            continue
        if sum(_is_xsd_iri(e) for e in elts) >= 2:
            lines.append(node.lineno)
    return sorted(set(lines))


def test_no_module_but_the_table_lists_xsd_datatypes() -> None:
    offenders = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT.parent).as_posix()
        if rel in OWNERS:
            continue
        offenders += [f"{rel}:{n}" for n in xsd_collections(path.read_text(encoding="utf-8"))]
    assert not offenders, "use navqa.model.xsd instead:\n" + "\n".join(offenders)


def test_the_finder_finds_each_spelling() -> None:
    assert xsd_collections('S = {XSD + "int", XSD + "long"}') == [1]
    assert xsd_collections('S = frozenset(XSD + t for t in ("a", "b"))') == [1]
    assert xsd_collections('D = {XSD + "date": "d", XSD + "time": "t"}.get(x)') == [1]
    assert xsd_collections(f'N = "{XSD_NS}"') == [1]
    assert xsd_collections('if dt in (XSD + "dateTime", XSD + "dateTimeStamp"): pass') == [1]
    assert xsd_collections('x = XSD + "string"\ny = {"a", "b"}') == []

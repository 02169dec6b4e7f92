"""Values from the data print as they are: rich markup in a literal is text, not style."""

from __future__ import annotations

import io

from rich.console import Console

from navqa.cli.render import to_table
from navqa.model.terms import IRITerm, LiteralTerm, SelectResult

TRICKY = ("[/x]", "[link=http://e.vil]click[/link]", "[bold]loud[/bold]", "[endpoint x]")


def _printed(renderable: object) -> str:
    out = Console(record=True, width=200, file=io.StringIO())
    out.print(renderable)
    return out.export_text()


def test_literals_with_markup_print_verbatim() -> None:
    result = SelectResult(variables=("[v]",), rows=tuple((LiteralTerm(t),) for t in TRICKY))
    text = _printed(to_table(result))
    for t in TRICKY:
        assert t in text
    assert "[v]" in text


def test_iris_with_brackets_print_verbatim() -> None:
    result = SelectResult(variables=("s",), rows=((IRITerm("http://x.org/[/a]"),),))
    assert "http://x.org/[/a]" in _printed(to_table(result))

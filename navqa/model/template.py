"""IRI templates (``http://ex.org/well/{id}``): their constant parts, placeholders and unification.

In a VKG the IRI templates of the mappings say exactly which IRIs a class or property
can produce. Two templates *unify* when some IRI matches both; a join whose templates
cannot unify can never return rows.

Placeholder values are IRI-safe-encoded by Ontop (R2RML §7.3), so a placeholder never
produces a reserved character such as ``/``, ``#``, ``?`` or ``=``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

#: A ``{column}`` placeholder (not preceded by a backslash); group 1 is the column as written.
PLACEHOLDER = re.compile(r"(?<!\\)\{([^{}]*)\}")
# Characters a placeholder value may produce after IRI-safe encoding.
_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~%")


def unquote_column(name: str) -> str:
    """A placeholder's column name without its SQL quotes (``"a"``, `` `a` ``, ``[a]`` -> ``a``)."""
    name = name.strip()
    if len(name) >= 2 and name[0] == name[-1] and name[0] in "\"`":
        return name[1:-1]
    if len(name) >= 2 and name[0] == "[" and name[-1] == "]":
        return name[1:-1]
    return name


@dataclass(frozen=True, slots=True)
class IriTemplate:
    """An IRI template with ``{column}`` placeholders.

    Attributes:
        text: The template as written, fully expanded (no prefixes), e.g.
            ``http://ex.org/well/{"wlbNpdid"}``.
    """

    text: str

    @property
    def columns(self) -> tuple[str, ...]:
        """Placeholder column names, unquoted, in order."""
        return tuple(unquote_column(m.group(1)) for m in PLACEHOLDER.finditer(self.text))

    @property
    def parts(self) -> tuple[str, ...]:
        """The constant parts around the placeholders (``len(columns) + 1`` of them)."""
        return tuple(PLACEHOLDER.split(self.text)[::2])

    @property
    def key(self) -> str:
        """The template with every placeholder written ``{}``: equal keys, same IRI shape."""
        return "{}".join(self.parts)

    @property
    def prefix(self) -> str:
        """The constant text before the first placeholder."""
        return self.parts[0]

    @property
    def is_constant(self) -> bool:
        return not self.columns

    def unifies(self, other: IriTemplate) -> bool:
        """Whether some IRI can match both templates.

        Example:
            >>> IriTemplate("http://x/well/{a}").unifies(IriTemplate("http://x/well/{b}"))
            True
            >>> IriTemplate("http://x/well/{a}").unifies(IriTemplate("http://x/field/{b}"))
            False
        """
        return _unify(_tokens(self.key), _tokens(other.key))

    def matches(self, iri: str) -> bool:
        """Whether the concrete ``iri`` could have been produced by this template."""
        return _unify(_tokens(self.key), tuple(iri))

    def __str__(self) -> str:
        return self.text


_HOLE = object()


@cache
def _tokens(key: str) -> tuple[object, ...]:
    out: list[object] = []
    for i, part in enumerate(key.split("{}")):
        if i:
            out.append(_HOLE)
        out.extend(part)
    return tuple(out)


def _unify(a: tuple[object, ...], b: tuple[object, ...]) -> bool:
    """Intersection non-emptiness of two patterns made of characters and holes (``[SAFE]*``)."""

    @cache
    def go(i: int, j: int) -> bool:
        if i == len(a) and j == len(b):
            return True
        x = a[i] if i < len(a) else None
        y = b[j] if j < len(b) else None
        if x is _HOLE and y is _HOLE:
            return go(i + 1, j) or go(i, j + 1)
        if x is _HOLE:
            # the hole matches nothing more, or swallows one safe character of b
            return go(i + 1, j) or (y is not None and y in _SAFE and go(i, j + 1))
        if y is _HOLE:
            return go(i, j + 1) or (x is not None and x in _SAFE and go(i + 1, j))
        if x is None or y is None:
            return False
        return x == y and go(i + 1, j + 1)

    return go(0, 0)

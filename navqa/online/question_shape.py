"""The parsed structure of a question: what it asks for and how, not what it is about.

:func:`parse_shape` reads the form of the question from general cue words
(:mod:`navqa.online.lexicon`) and sentence structure:

* **projection list** — further answer columns besides the entity ("the name *and* the
  depth of each …", "… along with their operator");
* **ordering** — with a bound (a superlative: one answer; "the top 5", "the 3 longest":
  five, three) or without one ("sorted by date", "from most to fewest", "latest first");
* **per-group counting** — "how many X does each Y have", "the number of X per Y";
* **negation**, **disjunction** of values ("A or B"), **yes/no**.

Which schema elements carry these is decided later, by the synthesizer; this module
knows nothing of a VKG.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum

from navqa.model.events import QuestionCues
from navqa.online.lexicon import NUMBER_VALUES, Phenomenon, pattern, superlative_direction, words


class Direction(Enum):
    """Direction of an ordering."""

    ASC = "ASC"
    DESC = "DESC"


_STOP = words(Phenomenon.STOPWORD)
_AUX_WORDS = words(Phenomenon.AUXILIARY)
_PER = words(Phenomenon.PER_GROUP)
_SUP = words(Phenomenon.SUPERLATIVE_MAX) | words(Phenomenon.SUPERLATIVE_MIN)
_ORDINAL = words(Phenomenon.ORDINAL_FIRST) | words(Phenomenon.ORDINAL_LAST)
_SUP_RE = "|".join(sorted(_SUP | _ORDINAL, key=len, reverse=True))
_NUM_RE = r"\d+|" + "|".join(NUMBER_VALUES)
_AUX = "|".join(sorted(words(Phenomenon.AUXILIARY), key=len, reverse=True))

# "sorted by their opening date (descending)", "ordered by depth", "in order of size"
_ORDER_BY = re.compile(rf"{pattern(Phenomenon.ORDER_BY)}\s+(?:by\s+)?(?:their\s+|its\s+|the\s+)?"
                       r"(?P<phrase>[a-zà-ÿ][\w\s\-]*?)\s*(?=[,.?!;]|$|\s+(?:and|from|with|in)\b"
                       r"|\s+(?:asc|desc))", re.I)
# "from most to fewest", "highest to lowest"
_SUP_RANGE = re.compile(rf"\b(?:from\s+)?(?:the\s+)?(?P<a>{_SUP_RE})\s+to\s+(?:the\s+)?"
                        rf"(?P<b>{_SUP_RE})\b", re.I)
# "latest first", "in descending order"
_DIRECTION_FIRST = re.compile(rf"(?P<asc>{pattern(Phenomenon.ORDER_ASC)})|"
                              rf"(?P<desc>{pattern(Phenomenon.ORDER_DESC)})", re.I)
# "the top 5 …", "the 3 longest …", "the first ten …"
_TOP_N = re.compile(rf"\btop\s+(?P<n1>{_NUM_RE})\b|\b(?P<n2>{_NUM_RE})\s+(?P<sup>{_SUP_RE})\b|"
                    rf"\b(?P<ord>{'|'.join(sorted(_ORDINAL))})\s+(?P<n3>{_NUM_RE})\b|"
                    rf"\bthe\s+(?P<n4>{_NUM_RE})\s+(?=.*\b(?P<sup4>{_SUP_RE})\b)", re.I)
# "how many X does each Y have", "the number of X per Y", "for each Y, how many X"
_PER_GROUP = re.compile(rf"{pattern(Phenomenon.PER_GROUP)}\s+(?P<group>[a-zà-ÿ][a-zà-ÿ\-]*"
                        rf"(?:\s+(?!(?:{_AUX}|have|has|had)\b)[a-zà-ÿ][a-zà-ÿ\-]*){{0,2}})",
                        re.I)
# "… along with their operator", "… and their depth"
_COMITATIVE = re.compile(rf"{pattern(Phenomenon.COMITATIVE)}\s+(?:the\s+|their\s+|its\s+)?"
                         r"(?P<phrase>[a-zà-ÿ][a-zà-ÿ\-]*(?:\s+[a-zà-ÿ][a-zà-ÿ\-]*){0,2}?)"
                         r"(?=\s*[,?.!;]|$|\s+(?:and|of|in|on|for|from|with|sorted|ordered)\b)",
                         re.I)
# "(list) the names and depths of …", "what are the name and status of …"
_PAIR = re.compile(r"^\W*(?:list|give|show|name|tell\s+me|what\s+(?:are|were|is|was))\s+"
                   r"(?:me\s+)?(?:the\s+)?(?P<a>[a-zà-ÿ][a-zà-ÿ\-]*(?:\s+[a-zà-ÿ\-]+)?)\s*"
                   r"(?:,|and|as\s+well\s+as)\s+(?:the\s+|their\s+|its\s+)?"
                   r"(?P<b>[a-zà-ÿ][a-zà-ÿ\-]*(?:\s+[a-zà-ÿ\-]+)?)\s+of\b", re.I)
_ALPHABETICAL = re.compile(pattern(Phenomenon.ORDER_ALPHABETICAL), re.I)
# "list at most ten", "give only five": a bound without an ordering
_AT_MOST_N = re.compile(r"\b(?:list|give|show|name|return)\s+(?:me\s+)?"
                        rf"(?:at\s+most|up\s+to|only)\s+(?P<n>{_NUM_RE})\b", re.I)
# "Which X …, and how large is each share?", "…, and from when?", "…, and with which Y?":
# a coordinated wh-clause asks for a further column
_AND_WH = re.compile(r",\s*and\s+(?P<prep>(?:from|since|until|with|in|to|at|by)\s+)?"
                     r"(?P<wh>how\s+(?:large|much|big|long|deep|high|old|many)|when|where|what|"
                     r"which|who|whom)\b(?P<rest>[^?.!]*)", re.I)
# what the wh-word of such a clause asks for, when its own words name nothing
_WH_HINT = {"when": "date", "where": "location place", "since": "date", "from": "date start",
            "until": "date end", "how": "amount size value"}
RANKED_QUANTITY = "(the ranked or compared quantity)"
"""The column phrase of "…, and how large are they?": the quantity the answers were ranked
or filtered by."""
_NAME_WORDS = words(Phenomenon.NAME_PROPERTY) | {w + "s" for w in
                                                 words(Phenomenon.NAME_PROPERTY)}


@dataclass(frozen=True, slots=True)
class Ordering:
    """An ordering of the answers: by the quantity ``phrase`` names, in ``direction``.

    Attributes:
        direction: Ascending or descending.
        phrase: The words naming what to order by ("" when a superlative word says it).
        limit: How many answers (1 for a superlative); ``None``: all of them, in order.
        bound_text: The number in the question that is the bound ("5" of "top 5"), which
            is therefore not a value to filter by.
        by_name: Order by the answers' names ("alphabetically"; a bare bound such as
            "list at most ten" orders by name too, so the answer is deterministic).
    """

    direction: Direction
    phrase: str = ""
    limit: int | None = None
    bound_text: str | None = None
    by_name: bool = False


@dataclass(frozen=True, slots=True)
class QuestionShape:
    """The structure of a question (see the module docstring)."""

    yes_no: bool = False
    count: bool = False
    per_group: str | None = None
    ordering: Ordering | None = None
    projections: tuple[str, ...] = field(default_factory=tuple)
    disjunction: bool = False


def _number(text: str) -> int:
    low = text.lower()
    return NUMBER_VALUES[low] if low in NUMBER_VALUES else int(low)


def unbounded_order(question: str) -> Ordering | None:
    """An ordering over all answers the question asks for, if any.

    Example:
        >>> unbounded_order("List the lines from most to fewest stops").direction.value
        'DESC'
        >>> unbounded_order("Which is the longest line?") is None
        True
    """
    q = question.lower()
    m = _SUP_RANGE.search(q)
    if m:
        d = superlative_direction(m.group("a"))
        tail = re.findall(r"[a-zà-ÿ][\w\-]*", q[m.end():])
        return Ordering(Direction.DESC if d == "max" else Direction.ASC, " ".join(tail[:3]))
    m = _ORDER_BY.search(q)
    if m:
        dm = _DIRECTION_FIRST.search(q)
        direction = Direction.DESC if dm and dm.group("desc") else Direction.ASC
        return Ordering(direction, m.group("phrase").strip())
    m = _DIRECTION_FIRST.search(q)
    if m and re.search(r"\bfirst\b|\border\b", q[m.start():]):
        return Ordering(Direction.DESC if m.group("desc") else Direction.ASC,
                        m.group(0).split()[0])
    return None


def bounded_order(question: str) -> Ordering | None:
    """A "top n" ordering ("the top 5 …", "the 3 longest …", "the first ten …", "the 3 X
    with the most Y")."""
    m = _TOP_N.search(question)
    if not m:
        return None
    if m.group("n1"):
        return Ordering(Direction.DESC, "", _number(m.group("n1")), m.group("n1"))
    if m.group("n2"):
        d = superlative_direction(m.group("sup"))
        return Ordering(Direction.DESC if d == "max" else Direction.ASC, m.group("sup").lower(),
                        _number(m.group("n2")), m.group("n2"))
    if m.group("n4"):  # "the 3 books with the most pages"
        d = superlative_direction(m.group("sup4"))
        return Ordering(Direction.DESC if d == "max" else Direction.ASC,
                        m.group("sup4").lower(), _number(m.group("n4")), m.group("n4"))
    d = superlative_direction(m.group("ord"))
    return Ordering(Direction.DESC if d == "max" else Direction.ASC, m.group("ord").lower(),
                    _number(m.group("n3")), m.group("n3"))


def per_group(question: str) -> str | None:
    """The words after the distributive ("how many X does **each Y** have"): up to three,
    the group's noun phrase first (the synthesizer matches their prefixes)."""
    m = _PER_GROUP.search(question)
    return m.group("group").strip().lower() if m else None


def projections(question: str) -> tuple[str, ...]:
    """Phrases naming further answer columns, besides the answer entity itself.

    A name among them ("the names and depths of") is the entity's own column: left out.

    Example:
        >>> projections("List the names and lengths of all rivers")
        ('lengths',)
        >>> projections("Which ports are there, along with their country?")
        ('country',)
    """
    out: list[str] = []
    m = _PAIR.match(question)
    if m:
        out += [p for p in (m.group("a"), m.group("b")) if p.split()[-1].lower()
                not in _NAME_WORDS]
        if len(out) == 2:  # "the depth and age of": both are values, no name column asked
            out = [m.group("a"), m.group("b")]
    for c in _COMITATIVE.finditer(question):
        out.append(c.group("phrase"))
    w = _AND_WH.search(question)
    if w and not w.group("wh").lower().endswith("many"):
        content = [t for t in re.findall(r"[a-zà-ÿ][\w\-]*", w.group("rest").lower())
                   if t not in _STOP and t not in _AUX_WORDS and t not in _PER]
        prep = (w.group("prep") or "").strip().lower()
        hint = _WH_HINT.get(prep) or _WH_HINT.get(w.group("wh").split()[0].lower(), "")
        out.append(" ".join([*content[:3], hint]).strip() if content else
                   RANKED_QUANTITY if hint == _WH_HINT["how"] else hint)
    return tuple(dict.fromkeys(p.strip().lower() for p in out if p.strip()))


def parse_shape(question: str, cues: QuestionCues) -> QuestionShape:
    """The structure of ``question`` (``cues``: the wh-, count and superlative cues)."""
    ordering = bounded_order(question)
    bare = _AT_MOST_N.search(question)
    if _ALPHABETICAL.search(question) or (ordering is None and bare):
        bound = ordering or (Ordering(Direction.ASC, "", _number(bare.group("n")),
                                      bare.group("n")) if bare else None)
        ordering = Ordering(Direction.ASC, "", bound.limit if bound else None,
                            bound.bound_text if bound else None, by_name=True)
    if ordering is None and cues.superlative is not None:
        ordering = Ordering(Direction.DESC if cues.superlative == "max" else Direction.ASC,
                            cues.superlative_word or "", 1)
    if ordering is None:
        ordering = unbounded_order(question)
    group = per_group(question) if cues.how_many else None
    disjunction = bool(re.search(rf"\S\s+{pattern(Phenomenon.DISJUNCTION)}\s+\S", question,
                                 re.I))
    return QuestionShape(yes_no=cues.yes_no, count=cues.how_many, per_group=group,
                         ordering=ordering, projections=projections(question),
                         disjunction=disjunction)

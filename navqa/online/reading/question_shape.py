"""The parsed structure of a question: what it asks for and how, not what it is about.

:func:`parse_shape` reads the form of the question from general cue words
(:mod:`navqa.online.reading.lexicon`) and sentence structure:

* **projection list** — further answer columns besides the entity ("the name *and* the
  depth of each …", "… along with their operator");
* **ordering** — with a bound (a superlative: one answer; "the top 5", "the 3 longest":
  five, three) or without one ("sorted by date", "from most to fewest", "latest first");
* **per-group counting** — "how many X does each Y have", "the number of X per Y";
* **counting shapes** — a ranking by a count ("which X has the most Y"), a bound on a
  count ("which X have more than 60 different Y") and a count per year ("how many X …
  in each year"): :class:`CountRank`, :class:`CountBound`, ``per_year``;
* **negation**, **disjunction** of values ("A or B"), **yes/no**.

Which schema elements carry these is decided later, by the synthesizer; this module
knows nothing of a VKG.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from enum import Enum

from navqa.model.events import QuestionCues
from navqa.online.reading.asked_columns import optional_columns, projections
from navqa.online.reading.lexicon import (
    NUMBER_VALUES,
    Phenomenon,
    pattern,
    superlative_direction,
    words,
)


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
_ALPHABETICAL = re.compile(pattern(Phenomenon.ORDER_ALPHABETICAL), re.I)
# "list at most ten", "give only five": a bound without an ordering
_AT_MOST_N = re.compile(r"\b(?:list|give|show|name|return)\s+(?:me\s+)?"
                        rf"(?:at\s+most|up\s+to|only)\s+(?P<n>{_NUM_RE})\b", re.I)

# -- counting shapes: "the most X", "more than 60 different X", "in each year" -------------
# a noun phrase of up to four content words (ends before a function word or punctuation)
_NP_WORD = rf"(?!(?:{'|'.join(sorted(_STOP | _AUX_WORDS, key=len, reverse=True))})\b)" \
    r"[a-zà-ÿ][\w\-]*"
_NP = rf"(?P<np>{_NP_WORD}(?:\s+{_NP_WORD}){{0,3}})"
_DISTINCT = rf"(?:(?:{pattern(Phenomenon.DISTINCT_WORD)})\s+)?"
# "the most X", "the fewest X", "the largest number of X", "the highest count of X" (not
# the comparatives "at least X", "no fewer than X")
_COUNT_RANK = re.compile(
    rf"\b(?:(?<!at\s)(?<!no\s)(?P<q>{pattern(Phenomenon.COUNT_SUPERLATIVE)})\s+{_DISTINCT}"
    rf"|(?P<s>{_SUP_RE})\s+(?:{pattern(Phenomenon.COUNT_NOUN)})\s+of\s+(?:the\s+)?{_DISTINCT})"
    rf"{_NP}", re.I)
# "which five X …", "the three X …": the bound of a ranking by a count
_RANK_BOUND = re.compile(rf"\b(?:which|what|the|top)\s+(?P<n>{_NUM_RE})\b", re.I)
_COMPARATOR_CUES = ((Phenomenon.COMPARATIVE_GE, ">="), (Phenomenon.COMPARATIVE_LE, "<="),
                    (Phenomenon.COMPARATIVE_GT, ">"), (Phenomenon.COMPARATIVE_LT, "<"))
# "more than 60 different X", "at least ten X", "fewer than 3 X"
_COUNT_BOUND = re.compile(
    "(?P<cmp>" + "|".join(pattern(p) for p, _ in _COMPARATOR_CUES) + ")"
    rf"\s+(?P<n>{_NUM_RE})\s+(?P<distinct>{_DISTINCT}){_NP}", re.I)
_COUNT_COLUMN = re.compile(pattern(Phenomenon.COUNT_COLUMN), re.I)
_PER_YEAR = re.compile(pattern(Phenomenon.PER_YEAR), re.I)
_ADJECTIVE_END = ("ive", "ous", "ful", "able", "ible")


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
class CountRank:
    """A ranking of the answers by how many things of a class each has ("Which X has
    drilled the most Y?", "the five X with the largest number of Y").

    Attributes:
        phrase: The words naming the counted things ("exploration wellbores"); whether
            they name a class (count it) or a quantity ("the most oil": order by it) the
            synthesizer decides against the schema.
        direction: DESC for "most"/"largest number", ASC for "fewest"/"least".
        limit: How many answers (1 unless a bound says "which five", "the top three").
        show_count: Whether the count is asked for too ("…, and in how many?").
    """

    phrase: str
    direction: Direction
    limit: int = 1
    show_count: bool = False


@dataclass(frozen=True, slots=True)
class CountBound:
    """A bound on how many things of a class each answer has ("Which X have more than 60
    different Y?", "at least ten Y"): a HAVING on a count per answer.

    Attributes:
        phrase: The words naming the counted things ("anatomical entities").
        comparator: ``>``, ``>=``, ``<`` or ``<=``.
        value: The bound.
        number_text: The bound as written ("ten"), so that it is no value to filter by.
        distinct: Whether "different"/"distinct" says these are things, not a quantity.
        show_count: Whether the count is asked for too ("…, and how many?").
    """

    phrase: str
    comparator: str
    value: int
    number_text: str
    distinct: bool = False
    show_count: bool = False


@dataclass(frozen=True, slots=True)
class QuestionShape:
    """The structure of a question (see the module docstring)."""

    yes_no: bool = False
    count: bool = False
    per_group: str | None = None
    ordering: Ordering | None = None
    projections: tuple[str, ...] = field(default_factory=tuple)
    disjunction: bool = False
    optional_columns: frozenset[str] = frozenset()
    """The projections whose value may be missing ("… if any"): OPTIONAL, the others not."""
    count_rank: CountRank | None = None
    """"the most Y": answers ranked by a count (see :class:`CountRank`)."""
    count_bound: CountBound | None = None
    """"more than 60 different Y": answers filtered by a count (see :class:`CountBound`)."""
    per_year: bool = False
    """"how many X … in each year": one count per calendar year of a date of X."""


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


def superlative_bound(question: str, word: str) -> str | None:
    """The numeral that bounds a superlative from before it ("Which **five** fields have the
    largest reserves?", "What are the three companies with the most …"): the determiner
    position of the answer noun phrase, which a superlative alone (LIMIT 1) ignores.

    Example:
        >>> superlative_bound("Which five fields have the largest gas reserves?", "largest")
        'five'
        >>> superlative_bound("Which field has the largest gas reserves?", "largest") is None
        True
    """
    at = question.lower().find(word.lower()) if word else -1
    return _numeral_before(question, at) if at >= 0 else None


def _numeral_before(question: str, end: int) -> str | None:
    """The first "which five" / "the three" / "top 3" numeral before ``end``, if any."""
    b = next(iter(_RANK_BOUND.finditer(question[:end])), None)
    return b.group("n") if b else None


def per_group(question: str) -> str | None:
    """The words after the distributive ("how many X does **each Y** have"): up to three,
    the group's noun phrase first (the synthesizer matches their prefixes)."""
    m = _PER_GROUP.search(question)
    return m.group("group").strip().lower() if m else None


def _countable(np: str) -> bool:
    """Whether a noun phrase reads as countable things: a plural head, no adjective
    before it ("the most populous cities" ranks by a quantity, not by a count)."""
    ws = np.lower().split()
    head = ws[-1]
    plural = len(head) > 3 and head.endswith("s") and not head.endswith(("ss", "us", "is"))
    return plural and not any(w.endswith(_ADJECTIVE_END) for w in ws[:1])


def count_rank(question: str, ordering: Ordering | None = None) -> CountRank | None:
    """A ranking by a count ("Which X has the most Y?"), if the question asks for one.

    ``ordering`` is the ordering read otherwise: its bound ("give the top three") bounds
    the ranking.

    Example:
        >>> r = count_rank("Which five authors wrote the largest number of books?")
        >>> (r.phrase, r.direction.value, r.limit, r.show_count)
        ('books', 'DESC', 5, False)
        >>> count_rank("Which river is the most polluted?") is None
        True
    """
    if re.match(r"^\W*how\s+many\b", question, re.I):
        return None
    m = _COUNT_RANK.search(question)
    if m is None or not _countable(m.group("np")):
        return None
    d = superlative_direction(m.group("q") or m.group("s"))
    limit = 1
    if ordering is not None and ordering.bound_text and ordering.limit:
        limit = ordering.limit
    else:
        numeral = _numeral_before(question, m.start())
        limit = _number(numeral) if numeral else 1
    return CountRank(m.group("np").lower(), Direction.ASC if d == "min" else Direction.DESC,
                     limit, _COUNT_COLUMN.search(question) is not None)


def count_bound(question: str) -> CountBound | None:
    """A bound on a count per answer ("Which X have more than 60 different Y?").

    Example:
        >>> b = count_bound("Which authors wrote at least ten different books, and how many?")
        >>> (b.phrase, b.comparator, b.value, b.number_text, b.distinct, b.show_count)
        ('books', '>=', 10, 'ten', True, True)
    """
    if re.match(r"^\W*how\s+many\b", question, re.I):
        return None
    m = _COUNT_BOUND.search(question)
    if m is None or not _countable(m.group("np")):
        return None
    cmp_text = m.group("cmp")
    op = next(o for p, o in _COMPARATOR_CUES if re.fullmatch(pattern(p), cmp_text, re.I))
    return CountBound(m.group("np").lower(), op, _number(m.group("n")), m.group("n"),
                      bool(m.group("distinct").strip()),
                      _COUNT_COLUMN.search(question[m.end():]) is not None)


def per_year(question: str) -> bool:
    """Whether a count is asked per calendar year ("… in each year", "… per year")."""
    return _PER_YEAR.search(question) is not None


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
        numeral = superlative_bound(question, cues.superlative_word or "")
        if numeral is not None:
            ordering = replace(ordering, limit=_number(numeral), bound_text=numeral)
    if ordering is None:
        ordering = unbounded_order(question)
    group = per_group(question) if cues.how_many else None
    disjunction = bool(re.search(rf"\S\s+{pattern(Phenomenon.DISJUNCTION)}\s+\S", question,
                                 re.I))
    yearly = cues.how_many and per_year(question)
    if yearly:
        group = None  # "in each year" groups by a date, not by a class
    return QuestionShape(yes_no=cues.yes_no, count=cues.how_many, per_group=group,
                         ordering=ordering, projections=projections(question),
                         optional_columns=optional_columns(question, projections(question)),
                         disjunction=disjunction, count_rank=count_rank(question, ordering),
                         count_bound=count_bound(question), per_year=yearly)

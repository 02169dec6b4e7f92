"""Mention extraction: what a question talks about (NaVQA's W_C, W_P, plus values and cues).

Two implementations of one job:

* :func:`extract_mentions` — deterministic: quoted strings and capitalised names become
  value mentions; numbers, years, dates and clock times with their comparison words
  become typed value mentions; the remaining content words form n-gram mentions (used
  for both classes and properties); wh-words and superlatives become cues.
* :class:`LLMMentionExtractor` — asks the LLM for JSON, validated; its values are
  checked against the question text so the model cannot invent a value.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Sequence

from pydantic import BaseModel, Field

from navqa.backends.protocols import LLM
from navqa.model.events import Mentions, QuestionCues, StringMatch, ValueMention
from navqa.model.llm import Message
from navqa.online.reading.lexicon import (
    NUMBER_VALUES,
    Phenomenon,
    pattern,
    quantity_of,
    superlative_direction,
    words,
)
from navqa.online.reading.question_shape import unbounded_order

STOP = words(Phenomenon.STOPWORD)
# Words that are about the question's form rather than its content.
FORM_WORDS = words(Phenomenon.FORM_WORD)
_SUPERLATIVE_WORDS = (words(Phenomenon.SUPERLATIVE_MAX) | words(Phenomenon.SUPERLATIVE_MIN))
_COMPARATIVES = "|".join(pattern(p) for p in (
    Phenomenon.COMPARATIVE_GT, Phenomenon.COMPARATIVE_GE, Phenomenon.COMPARATIVE_LT,
    Phenomenon.COMPARATIVE_LE))
_ORDINALS = words(Phenomenon.ORDINAL_FIRST) | words(Phenomenon.ORDINAL_LAST)
_ORDINAL_WH = ("what", "which", "where", "when", "who")

_COMPARATORS: list[tuple[str, str]] = [
    (pattern(Phenomenon.COMPARATIVE_GT), ">"),
    (pattern(Phenomenon.DATE_AFTER), ">"),
    (pattern(Phenomenon.DATE_SINCE), ">="),
    (pattern(Phenomenon.COMPARATIVE_GE), ">="),
    (pattern(Phenomenon.COMPARATIVE_LT), "<"),
    (pattern(Phenomenon.DATE_BEFORE), "<"),
    (pattern(Phenomenon.COMPARATIVE_LE), "<="),
]
# "between A and B", "from A to B": A is the lower bound, B the upper one (both inclusive)
_RANGE_LOW = re.compile(r"\bbetween\s+$", re.I)
_RANGE_LOW_FROM = re.compile(r"\bfrom\s+$", re.I)
_RANGE_HIGH = re.compile(r"\b(?:between|from)\s+[\w.,:-]+\s+(?:and|to|until)\s+$", re.I)
_RANGE_NEXT = re.compile(r"^[\w.,:-]*\s+(?:to|until|and)\s+\d", re.I)
# a calendar month with its year ("October 2012"), or a range of months ("between October
# and December 2012", "from March 2010 to May 2011"); capitalised, so that the verb "may"
# is none
_MONTHS = {name: i for i, name in enumerate(calendar.month_name) if name}
_MONTH_RE = "|".join(_MONTHS)
_MONTH_RANGE = re.compile(rf"\b(?:between|from)\s+(?P<m1>{_MONTH_RE})(?:\s+(?P<y1>\d{{4}}))?"
                          rf"\s+(?:and|to|until|through)\s+(?P<m2>{_MONTH_RE})\s+(?P<y2>\d{{4}})\b")
_MONTH_YEAR = re.compile(rf"\b(?P<m>{_MONTH_RE})\s+(?P<y>\d{{4}})\b")
_NUMBER_WORDS = NUMBER_VALUES
_NUMBERS_JOINED = re.compile(r"[\d.,]+(?:\s+\S+\s+[\d.,]+)+")
_TIME = re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)(?=\W|$)", re.I)
_HHMM = re.compile(r"\b([01]?\d|2[0-3]):([0-5]\d)\b")
_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_DECADE = re.compile(r"\b(1[5-9]\d0|20[0-9]0)s\b")
_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")
_NUMBER = re.compile(r"(?<![\w/.-])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?![\w/-])")
# Digits with a leading zero name something ("production licence 018"); no quantity is
# written that way (the "000" of "100,000" is not one: see the check on the preceding comma).
_IDENTIFIER = re.compile(r"0\d+")
_QUOTED = re.compile(r"[\"“”«»]([^\"“”«»]{1,120})[\"“”«»]|(?<!\w)'([^']{2,80})'(?!\w)")
# A capitalised name: a capitalised word or an identifier with digits, followed by more
# capitalised words, connectors ("&", "de", "du", "of") and identifiers.
_NAME_TOKEN = (r"(?:[A-ZÀ-Þ][\w'’.\-À-ÿ]*|\d+[A-Za-z][\w\-/]*|[A-Za-z]*\d+[\w\-/]*"
               r"|\d+/\d+(?:-\d+)?)")
_CONNECT = (r"(?:(?:\s+(?:" + "|".join(re.escape(w) for w in sorted(words(
    Phenomenon.NAME_PARTICLE))) + r"))+\s+)")
# an en dash between two names without spaces joins them into one ("the Kårstø–Emden
# pipeline", "the Paris–Rouen line"); a spaced dash is punctuation
_NAME = re.compile(rf"{_NAME_TOKEN}(?:(?:\s+|{_CONNECT}|–){_NAME_TOKEN})*")
_WH = tuple(sorted(words(Phenomenon.WH_WORD), key=len, reverse=True))
_YESNO = re.compile(rf"^\s*({'|'.join(sorted(words(Phenomenon.YES_NO)))})\b", re.I)


# String patterns: "a name starting with 'Cec'", "ending in 'hausen'", "'wing' in their name"
_PATTERN_CUES = tuple((match, re.compile(rf"(?:{pattern(ph)})$", re.I)) for match, ph in (
    (StringMatch.PREFIX, Phenomenon.STRING_PREFIX), (StringMatch.SUFFIX, Phenomenon.STRING_SUFFIX),
    (StringMatch.CONTAINS, Phenomenon.STRING_CONTAINS)))
_OWNERS = words(Phenomenon.STRING_OWNER) | words(Phenomenon.POSSESSIVE)
_CONTAINED = re.compile(
    rf"^\s*(?:{pattern(Phenomenon.STRING_CONTAINED)})\s+(?:{pattern(Phenomenon.POSSESSIVE)})\s+"
    r"(?P<prop>[a-zà-ÿ][\w\-]*(?:\s+[a-zà-ÿ][\w\-]*)?)(?=\s*(?:[?.,;!]|$|\band\b|\bor\b))",
    re.I)
_PROPERTY_WORDS = 2
"""Words of the phrase naming the property a pattern applies to ("name", "English name")."""


def _string_pattern(question: str, a: int, b: int, *,
                    quoted: bool) -> tuple[StringMatch, str | None]:
    """Whether the value at ``question[a:b]`` is a pattern on a stored string, and the
    phrase naming the property it applies to (``None``: the answer's name).

    Before the value: "(a|the|their|whose|with) <property> starting with / ending in /
    containing <value>"; without a property phrase ("Which genes start with 'Cec'?") the
    pattern is on the name. After a quoted value: "<value> in their <property>". An
    unquoted name is a pattern only with its property phrase ("whose name contains
    Conoco"), so that "Which lines contain Dunmere?" stays a value.
    """
    before = question[:a].rstrip(" \"'“”«»‘’")
    for match, cue in _PATTERN_CUES:
        m = cue.search(before)
        if m is None:
            continue
        prop: list[str] = []
        owner = False
        for w in reversed(re.findall(r"[\wà-ÿ\-]+", before[:m.start()])[-(_PROPERTY_WORDS + 1):]):
            if w.lower() in _OWNERS:
                owner = True
                break
            prop.insert(0, w.lower())
        phrase = " ".join(prop) if owner and prop else None
        if phrase is None and not quoted:
            continue
        return match, phrase
    if quoted:
        m = _CONTAINED.match(question[b:])
        if m is not None:
            return StringMatch.CONTAINS, m.group("prop").lower()
    return StringMatch.EXACT, None


def _string_value(question: str, text: str, a: int, b: int, *, quoted: bool) -> ValueMention:
    """A string value mention, with its pattern when it is one (a quoted pattern with
    capitals is matched case-sensitively: it was copied as stored; else case is ignored)."""
    match, prop = _string_pattern(question, a, b, quoted=quoted)
    if match is StringMatch.EXACT:
        return ValueMention(text, "string")
    return ValueMention(text, "string", match=match, match_property=prop,
                        case_sensitive=quoted and any(c.isupper() for c in text))


def _number(text: str) -> str:
    return text.replace(",", "")


# "50 years or more", "3 km or less": the comparison after the number (and its unit)
_COMPARATOR_AFTER = [
    (re.compile(rf"^\s*(?:[a-zà-ÿ%]+\s+){{0,2}}?(?:{pattern(Phenomenon.COMPARATIVE_GE_AFTER)})",
                re.I), ">="),
    (re.compile(rf"^\s*(?:[a-zà-ÿ%]+\s+){{0,2}}?(?:{pattern(Phenomenon.COMPARATIVE_LE_AFTER)})",
                re.I), "<="),
]


def _comparator_before(question: str, start: int, end: int | None = None) -> str:
    """The comparison a value takes: a cue before it ("more than 5"), or, when ``end`` is
    given, a postposed one right after it and its unit ("5 years or more")."""
    if end is not None:
        for after, op in _COMPARATOR_AFTER:
            if after.match(question[end:end + 40]):
                return op
    window = question[max(0, start - 30):start].lower()
    if _RANGE_HIGH.search(window):
        return "<="
    if _RANGE_LOW.search(window) or (_RANGE_LOW_FROM.search(window)
                                     and _RANGE_NEXT.match(question[start:])):
        return ">="
    best = ("=", -1)
    for regex, op in _COMPARATORS:
        for m in re.finditer(regex, window):
            if m.end() > best[1]:
                best = (op, m.end())
    return best[0]


def _noun_sense(toks: list[str], i: int) -> bool:
    """Whether the superlative-looking word ``toks[i]`` is a noun or a coordinated modifier
    here: "the top and base depth", "the top of the interval" (a superlative coordinated
    with another one, "the longest and deepest", stays one)."""
    nxt = toks[i + 1:i + 3]
    if nxt[:1] == ["of"] and toks[i] == "top":
        return True
    return nxt[:1] in (["and"], ["or"]) and len(nxt) == 2 and nxt[1] not in _SUPERLATIVE_WORDS


def _cues(question: str) -> QuestionCues:
    q = question.strip().lower()
    wh = next((w for w in _WH if re.match(rf"^\W*{re.escape(w)}\b", q)), None)
    if wh is None:
        m = re.search(r"\b(how many|which|what|who|when|where)\b", q)
        wh = m.group(1) if m else None
    sup: str | None = None
    word: str | None = None
    # a comparative bound is not a superlative: "at least 99", "at most 3", "no more than"
    scan = re.sub(_COMPARATIVES, " ", q)
    toks = re.findall(r"[a-z]+", scan)
    for i, w in enumerate(toks):
        # an ordinal ranks in a wh-question ("where is the first …"), not in a count or a
        # request to list ("how many first editions", "list the first names")
        if _noun_sense(toks, i):
            continue
        if w in _SUPERLATIVE_WORDS or (w in _ORDINALS and wh in _ORDINAL_WH):
            sup, word = superlative_direction(w), w
            break
    if sup is not None and unbounded_order(q) is not None:
        # "from most to fewest": an ordering over all answers, not a superlative
        sup, word = None, None
    return QuestionCues(
        wh=wh,
        how_many=bool(re.search(pattern(Phenomenon.COUNT), q)),
        yes_no=bool(_YESNO.match(question)) and wh is None,
        superlative=sup,  # type: ignore[arg-type]
        superlative_word=word,
        list_all=bool(re.match(r"^\W*(list|show|give|name)\b", q)),
    )


def _month_dates(question: str) -> list[tuple[list[ValueMention], int, int]]:
    """Months named with their year, as date bounds: "between October and December 2012"
    → ≥ 2012-10-01 and ≤ 2012-12-31; "in October 2012" → the whole month; "before October
    2012" → < 2012-10-01; "after October 2012" → > 2012-10-31. Each with its span.

    Example:
        >>> [(v.text, v.comparator) for v in _month_dates("Which surveys ended between "
        ...  "October and December 2012?")[0][0]]
        [('2012-10-01', '>='), ('2012-12-31', '<=')]
        >>> [(v.text, v.comparator) for v in _month_dates("… begun after May 2010")[0][0]]
        [('2010-05-31', '>')]
    """
    def first(year: str, month: str) -> str:
        return f"{year}-{_MONTHS[month]:02d}-01"

    def last(year: str, month: str) -> str:
        m = _MONTHS[month]
        return f"{year}-{m:02d}-{calendar.monthrange(int(year), m)[1]:02d}"

    out: list[tuple[list[ValueMention], int, int]] = []
    spans: list[tuple[int, int]] = []
    for r in _MONTH_RANGE.finditer(question):
        low = first(r.group("y1") or r.group("y2"), r.group("m1"))
        high = last(r.group("y2"), r.group("m2"))
        said = r.group(0)
        out.append(([ValueMention(low, "date", ">=", written=said),
                     ValueMention(high, "date", "<=", written=said)], r.start(), r.end()))
        spans.append((r.start(), r.end()))
    for m in _MONTH_YEAR.finditer(question):
        if any(a <= m.start() < b for a, b in spans):
            continue
        y, mon, said = m.group("y"), m.group("m"), m.group(0)
        cmp = _comparator_before(question, m.start())
        if cmp == "=":
            found = [ValueMention(first(y, mon), "date", ">=", written=said),
                     ValueMention(last(y, mon), "date", "<=", written=said)]
        elif cmp in (">", "<="):  # after / until October: from its end
            found = [ValueMention(last(y, mon), "date", cmp, written=said)]
        else:  # before / since October: from its start
            found = [ValueMention(first(y, mon), "date", cmp, written=said)]
        out.append((found, m.start(), m.end()))
    return out


def extract_mentions(question: str, *, max_ngram: int = 3) -> Mentions:
    """Deterministic mention extraction.

    Example:
        >>> m = extract_mentions("Which stations opened before 1860 in Dunmere?")
        >>> [v.text for v in m.values], m.values[0].comparator
        (['1860', 'Dunmere'], '<')
    """
    values: list[ValueMention] = []
    taken: list[tuple[int, int]] = []

    def free(a: int, b: int) -> bool:
        return all(b <= s or a >= e for s, e in taken)

    def add(v: ValueMention, a: int, b: int) -> None:
        values.append(v)
        taken.append((a, b))

    for m in _QUOTED.finditer(question):
        add(_string_value(question, m.group(1) or m.group(2), m.start(), m.end(), quoted=True),
            m.start(), m.end())
    for m in _DATE.finditer(question):
        if free(m.start(), m.end()):
            add(ValueMention(m.group(0), "date",
                             _comparator_before(question, m.start(), m.end())),
                m.start(), m.end())
    for v, a, b in _month_dates(question):
        if free(a, b):
            for one in v:
                values.append(one)
            taken.append((a, b))
    for m in _TIME.finditer(question):
        if free(m.start(), m.end()):
            h = int(m.group(1)) % 12 + (12 if m.group(3).lower().startswith("p") else 0)
            add(ValueMention(f"{h:02d}:{m.group(2) or '00'}:00", "time",
                             _comparator_before(question, m.start())), m.start(), m.end())
    for m in _HHMM.finditer(question):
        if free(m.start(), m.end()):
            add(ValueMention(f"{int(m.group(1)):02d}:{m.group(2)}:00", "time",
                             _comparator_before(question, m.start())), m.start(), m.end())
    for m in _DECADE.finditer(question):
        if free(m.start(), m.end()):
            add(ValueMention(m.group(1), "year", "decade"), m.start(), m.end())
    # Names first, so that identifiers such as "66-412" or "2K14" are not read as numbers.
    for m in _NAME.finditer(question):
        text = m.group(0).strip(" .,?!;:")
        a, b = m.start(), m.start() + len(text)
        if not text or not free(a, b):
            continue
        first_word = a == len(question) - len(question.lstrip())
        words = text.split()
        if first_word and len(words) == 1 and not any(c.isdigit() for c in text):
            continue  # "Which", "Is", … at the start of the sentence
        if first_word:
            text = " ".join(words[1:]) if words[0].lower() in STOP or _YESNO.match(words[0]) \
                else text
            a = b - len(text)
            if not text:
                continue
        identifier = _IDENTIFIER.fullmatch(text) and not (a and question[a - 1] in ",.")
        if (_YEAR.fullmatch(text) or _NUMBER.fullmatch(text)) and not identifier:
            continue
        if _NUMBERS_JOINED.fullmatch(text):
            continue  # "1850 and 1870": two numbers, each found below
        if text.lower() in STOP:
            continue
        text = re.sub(r"['’]s$", "", text)
        text = re.sub(r"^(?:the|The)\s+", "", text)
        add(_string_value(question, text, a, b, quoted=False), a, b)
    for m in _YEAR.finditer(question):
        if free(m.start(), m.end()):
            add(ValueMention(m.group(1), "year",
                             _comparator_before(question, m.start(), m.end())),
                m.start(), m.end())
    for m in _NUMBER.finditer(question):
        if free(m.start(), m.end()):
            add(ValueMention(_number(m.group(1)), "number",
                             _comparator_before(question, m.start(), m.end())),
                m.start(), m.end())
    for word, n in _NUMBER_WORDS.items():
        for m in re.finditer(rf"\b{word}\b", question, re.I):
            cmp = _comparator_before(question, m.start(), m.end())
            if free(m.start(), m.end()) and cmp != "=":
                add(ValueMention(str(n), "number", cmp), m.start(), m.end())
    # Content words outside value spans → n-gram mentions.
    masked = list(question)
    for a, b in taken:
        for i in range(a, b):
            masked[i] = " "
    rest = "".join(masked).lower()
    tokens = [t for t in re.findall(r"[a-zà-ÿ][a-zà-ÿ\-]*", rest)]
    grams: list[str] = []
    run: list[str] = []
    for t in tokens + ["the"]:
        if t in STOP or t in FORM_WORDS or t in _SUPERLATIVE_WORDS:
            if run:
                for n in range(min(max_ngram, len(run)), 0, -1):
                    for i in range(len(run) - n + 1):
                        g = " ".join(run[i:i + n])
                        if g not in grams:
                            grams.append(g)
                run = []
        else:
            run.append(t)
    cues = _cues(question)
    if cues.superlative_word and quantity_of(cues.superlative_word):
        grams.append(cues.superlative_word)
    ordered = sorted(values, key=lambda v: question.find(v.text))
    return Mentions(classes=tuple(grams), properties=tuple(grams), values=tuple(ordered),
                    cues=cues)


class _LLMValue(BaseModel):
    text: str
    kind: str = "string"
    comparator: str = "="


class AnswerHint(BaseModel):
    """What the LLM says the answer is: a noun phrase and a kind."""

    label: str = ""
    kind: str = "entity"


class _LLMMentions(BaseModel):
    class_mentions: list[str] = Field(default_factory=list)
    property_mentions: list[str] = Field(default_factory=list)
    value_mentions: list[_LLMValue] = Field(default_factory=list)
    answer: AnswerHint = Field(default_factory=AnswerHint)


_PROMPT = """Extract the mentions of a question asked over a knowledge graph.
Return JSON with three lists:
- "class_mentions": phrases naming kinds of things (e.g. "wellbore", "oil field", "company");
- "property_mentions": phrases naming relations or attributes (e.g. "operator", "drilled by",
  "population", "opening date");
- "value_mentions": concrete values with {"text", "kind" (string|number|year|date|time),
  "comparator" (=, >, <, >=, <=)}: names of specific things, numbers, dates.
and "answer": {"label": the noun phrase naming what the answer is (e.g. "wellbores",
"operator", "population"), "kind": entity|count|date|boolean|quantity|text}.
Copy values exactly as written in the question. Do not add anything that is not in it."""


class LLMMentionExtractor:
    """Mention extraction through the LLM (one call, JSON validated).

    The same call also states the answer type (SAGA's answer-type prior), so the prior
    costs no extra LLM call.
    """

    def __init__(self, llm: LLM) -> None:
        self.llm = llm

    def __call__(self, question: str) -> tuple[Mentions, AnswerHint]:
        resp = self.llm.call([Message.system(_PROMPT), Message.user(question)],
                             schema=_LLMMentions)
        out: _LLMMentions = resp.parsed
        offline = extract_mentions(question)
        values = [ValueMention(v.text, v.kind if v.kind in ("string", "number", "year", "date",
                                                            "time") else "string",  # type: ignore[arg-type]
                               v.comparator if v.comparator in ("=", ">", "<", ">=", "<=")
                               else "=")
                  for v in out.value_mentions if v.text and v.text.lower() in question.lower()]
        # a string pattern is grammar the offline reading finds ("starting with 'Cec'")
        patterns = {v.text.lower(): v for v in offline.values if v.match is not StringMatch.EXACT}
        values = [patterns.get(v.text.lower(), v) if v.kind == "string" else v for v in values]
        mentions = Mentions(
            classes=tuple(dict.fromkeys(m.lower() for m in out.class_mentions if m)),
            properties=tuple(dict.fromkeys(m.lower() for m in out.property_mentions if m)),
            values=tuple(values) or offline.values,
            cues=offline.cues,
        )
        return mentions, out.answer


def mention_texts(m: Mentions) -> Sequence[str]:
    """All class and property mention strings (deduplicated, in order)."""
    return list(dict.fromkeys([*m.classes, *m.properties]))

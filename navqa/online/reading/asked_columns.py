"""The projection list of a question: the further answer columns it asks for.

A question may ask several things of each answer: its name *and* a value ("the fields and
their operators", "…, and what is their depth?"). This module reads the phrases naming
those columns from the sentence's structure and general cue words
(:mod:`navqa.online.reading.lexicon`); which property each phrase is, is decided later by the
synthesizer (:mod:`navqa.online.synthesis.columns`). It knows nothing of a VKG.

Where a list of asked columns begins:

* a **head list** at the start: "(list | give | what are) the A, B and C of …" (two
  conjuncts at least; coordinated modifiers share the last head noun: "the scientific and
  common names");
* a **comitative**: "… along with / together with / including / with their / and their A
  (and B)";
* a **possessive list** after a verb that asks for values, anywhere: "For each field, give
  its name and discovery year", "… ? List their depths.";
* a **relative column**: "… and the N they carry", "… with the year it opened", "… and
  the N of their X" (the clause's verb or noun joins the phrase: "year opened");
* a coordinated **wh-clause**: "…, and what is their depth?", "… and how deep are they?",
  "…, and with which rigs?", "… and when?" ("how many" is a count, not a column).

A conjunct is a noun phrase of up to three content words after an optional determiner; it
ends at a function word, an auxiliary or punctuation. A bare name word ("the names") is
the entity's own column and is left out.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from navqa.online.reading.lexicon import Phenomenon, pattern, words

__all__ = [
    "RANKED_QUANTITY",
    "names_the_entity",
    "optional_columns",
    "pair_columns",
    "projections",
]

RANKED_QUANTITY = "(the ranked or compared quantity)"
"""The column phrase of "…, and how large are they?": the quantity the answers were ranked
or filtered by."""

_STOP = words(Phenomenon.STOPWORD)
_AUX = words(Phenomenon.AUXILIARY)
_AUX_RE = "|".join(sorted(_AUX, key=len, reverse=True))
_PER = words(Phenomenon.PER_GROUP)
_NAME_WORDS = words(Phenomenon.NAME_PROPERTY) | {w + "s" for w in
                                                 words(Phenomenon.NAME_PROPERTY)}
_DETERMINERS = words(Phenomenon.POSSESSIVE) | words(Phenomenon.DISTRIBUTIVE) | {
    "the", "a", "an", "each", "every"}
_MAX_WORDS = 3
"""Content words of one conjunct at most: a longer run is no noun phrase."""

# a column noun phrase ends at a function word or an auxiliary, but a name word ("the name
# and status") and the ordering verbs ("…, sorted by date") are no function words
# a comitative ("along with", "together with") ends a list: "its name along with …"
_BOUNDARY = (_STOP | _AUX | {"sorted", "ordered", "ranked", "grouped", "along", "together"}
             ) - _NAME_WORDS
_TOKEN = re.compile(r"[a-zà-ÿ0-9][\w\-]*|[^\w\s]")
_PUNCT_END = set("?.!;:()[]\"")

_ASK_VERB = pattern(Phenomenon.COLUMN_VERB)
# "(list) the names, depths and ages of …", "what are the name and status of …"
_HEAD_LIST = re.compile(rf"^\W*(?:{_ASK_VERB}|what\s+(?:are|were|is|was))\s+(?:me\s+)?"
                        r"(?P<rest>.*)$", re.I | re.S)
# "… give their names and depths", "what are their depths?", "List the members, their
# emails and join dates" (a possessive list set off by a comma needs no verb)
_POSSESSIVE_LIST = re.compile(rf"(?:(?:{_ASK_VERB}|what\s+(?:are|were|is|was))\s+(?:me\s+)?"
                              r"|,\s*)(?=(?:their|its)\b)", re.I)
# "For every shipment in 2020, list the weight, the origin and the destination": the
# entity is named by the leading clause, so everything the verb lists is a column
_PER_CLAUSE_LIST = re.compile(rf"^\W*for\s+(?:each|every|all)\b[^,?.!]*,\s*"
                              rf"(?:{_ASK_VERB}|what\s+(?:are|were|is|was))\s+(?:me\s+)?"
                              r"(?=(?:the|a|an)\b)", re.I)
# "Which trains stop at Leeds? Include the departure time.", "… Also give the capacity.":
# a later sentence that asks for more values of the answers ("Give the wellbores." after a
# question may name the answers themselves: only "include", "add" or "also" say "more")
_NEXT_SENTENCE_LIST = re.compile(rf"[?.!;]\s+(?:please\s+)?(?:include|add|also\s+(?:{_ASK_VERB}))"
                                 r"\s+(?:me\s+)?(?=(?:the|a|an)\b)", re.I)
_COMITATIVE = re.compile(pattern(Phenomenon.COMITATIVE), re.I)
_QUANTITY_NOUNS = words(Phenomenon.QUANTITY_NOUN)
# "Top 5 fields by reserves, with the volumes": the bare quantity noun after "with the"
_WITH_QUANTITY = re.compile(rf"\bwith\s+the\s+(?:{pattern(Phenomenon.QUANTITY_NOUN)})\b",
                            re.I)
# "… and the medium they carry", "… with the year it opened", "… and the size of their
# shares": a column named by a clause about the answer (a pronoun) or by "of their X"
_RELATIVE = re.compile(r"\b(?:and|with)\s+the\s+", re.I)
_BACK_REFERENCE = re.compile(r"^(?:(?:that|which|where|when|(?:in|on|at|by|from|to)\s+which)"
                             r"\s+)?(?:it|they|each)\b"
                             r"|^of\s+(?:their|its)\s+"
                             r"|^(?:for|to|of|in|with|by|at|behind)\s+(?:each|them|it)\b",
                             re.I)
# "…, and how large is each share?", "… and from when?", "…, and with which Y?"
_AND_WH = re.compile(r"(?:,\s*|\s)and\s+(?P<prep>(?:from|since|until|with|in|on|to|at|by)\s+)?"
                     r"(?P<wh>how\s+(?:large|much|big|long|deep|high|old|many)|"
                     rf"how(?=\s+(?:{_AUX_RE})\b)|when|where|what|"
                     r"which|who|whom)\b(?P<rest>[^?.!]*)", re.I)
# what the wh-word of such a clause asks for, when its own words name nothing
_WH_HINT = {"when": "date", "where": "location place", "since": "date since", "from": "date start",
            "until": "date end", "how": "amount size value"}
PLACE_WORDS = frozenset(_WH_HINT["where"].split())
"""The words a "where" clause adds to its phrase ("…, and where do they end?" → "end
location place"): a place, which a linked entity is as much as a value."""
# "… if any", "… when there is one", "… where (a height is) recorded": the column before it
# may have no value, so it must not narrow the answers
_MAYBE = re.compile(rf"{pattern(Phenomenon.OPTIONAL_VALUE)}|\b(?:when|where|if|whenever|"
                    r"wherever)\s+(?:(?:a|an|the|one|its|their|it|they|any|such)\s+)?"
                    r"(?:[a-zà-ÿ][\w\-]*\s+){0,2}?(?:(?:is|are|was|were|has\s+been|have\s+been)"
                    rf"\s+)?(?:{pattern(Phenomenon.OPTIONAL_QUALIFIER)})", re.I)


def names_the_entity(phrase: str) -> bool:
    """Whether a column phrase is a bare name word ("names", "their title"): the answer
    entity's own name, not a further column ("common names", "short name" are columns).

    Example:
        >>> names_the_entity("the names"), names_the_entity("common names")
        (True, False)
    """
    content = [t for t in re.findall(r"[a-zà-ÿ][\w\-]*", phrase.lower())
               if t not in _STOP or t in _NAME_WORDS]
    return bool(content) and all(t in _NAME_WORDS for t in content)


def pair_columns(a: str, b: str) -> list[str]:
    """The columns of a coordinated pair "the A and B of …".

    Coordinated modifiers share the head noun of the second conjunct ("the scientific and
    common names", "the oil and gas rates": two columns of that head); a bare name word is
    the entity's own name (left out).

    Example:
        >>> pair_columns("scientific", "common names")
        ['scientific names', 'common names']
        >>> pair_columns("names", "depths")
        ['depths']
        >>> pair_columns("recoverable oil", "gas resources")
        ['recoverable oil', 'recoverable gas resources']
        >>> pair_columns("email addresses", "join dates")
        ['email addresses', 'join dates']
    """
    a, b = a.strip(), b.strip()
    aw, bw = a.split(), b.split()
    if len(aw) == 1 and len(bw) >= 2 and not names_the_entity(a):
        return [f"{a} {bw[-1]}", b]
    if len(aw) == 2 and len(bw) >= 2 and aw[-1] != bw[-1] and not names_the_entity(a) \
            and not aw[-1].endswith("s"):
        # "the recoverable oil and gas resources": the modifier before the coordinated
        # nouns is shared by the second one too; a plural ends a noun phrase of its own
        # ("email addresses and join dates")
        return [a, f"{aw[0]} {b}"]
    return [p for p in (a, b) if not names_the_entity(p)]


def _list_columns(items: list[str], *, determined: bool = False) -> list[str]:
    """The columns of a coordinated list: a pair shares modifiers as :func:`pair_columns`
    says; in a longer list each one-word modifier takes the last conjunct's head noun ("the
    oil, gas and condensate reserves") only when every conjunct but the last is one word.
    Nothing is shared when a later conjunct has a determiner of its own (``determined``:
    "its country and its opening year" are two noun phrases)."""
    if determined or len(items) < 2:
        return [i for i in items if not names_the_entity(i)]
    if len(items) == 2:
        return pair_columns(*items)
    last = items[-1].split()
    if len(last) >= 2 and all(len(i.split()) == 1 for i in items[:-1]) \
            and not any(names_the_entity(i) for i in items[:-1]):
        return [f"{i} {last[-1]}" for i in items[:-1]] + [items[-1]]
    return [i for i in items if not names_the_entity(i)]


def _participle(word: str) -> bool:
    """A past participle ("located", "drilled"), not a noun ending so ("speed", "shed")."""
    return len(word) >= 5 and word.endswith("ed") and not word.endswith("eed")


class _Conjuncts(NamedTuple):
    """Coordinated noun phrases found at the start of a text."""

    items: list[str]
    ended: str
    """The word (or punctuation) that ended the list; "" at the end of the text."""
    determined: bool
    """Whether a conjunct after the first has a determiner of its own."""
    rest: str
    """The text from the word that ended the list on."""


def _conjuncts(text: str) -> _Conjuncts:
    """The coordinated noun phrases at the start of ``text``.

    Example:
        >>> c = _conjuncts("their depth, age and the year they opened?")
        >>> c.items, c.ended, c.determined, c.rest
        (['depth', 'age', 'year'], 'they', True, 'they opened?')
        >>> _conjuncts("the name and status of each line")[:3]
        (['name', 'status'], 'of', False)
    """
    toks = [(m.group(0).lower(), m.start()) for m in _TOKEN.finditer(text)]
    items: list[str] = []
    cur: list[str] = []
    i = 0
    determined = False

    def done(at: int) -> _Conjuncts:
        if cur:
            items.append(" ".join(cur))
        tok, start = toks[at] if at < len(toks) else ("", len(text))
        return _Conjuncts(items, tok, determined, text[start:])

    while i < len(toks):
        tok = toks[i][0]
        if tok in _DETERMINERS and not cur:
            determined = determined or bool(items)
            i += 1
            continue
        ahead = [t for t, _ in toks[i + 1:i + 3]]
        if tok in (",", "and") or (tok == "as" and ahead == ["well", "as"]):
            step = 3 if tok == "as" else 2 if tok == "," and ahead[:1] == ["and"] else 1
            nxt = toks[i + step][0] if i + step < len(toks) else ""
            # a later conjunct: a determiner or a content word; a participle ("… and
            # located in") or a wh-word ends the list
            if not cur or not nxt or (nxt not in _DETERMINERS and (
                    nxt in _BOUNDARY or not re.match(r"[a-zà-ÿ]", nxt)
                    or _participle(nxt))):
                return done(i)
            items.append(" ".join(cur))
            cur = []
            i += step
            continue
        if tok in _PUNCT_END or tok in _BOUNDARY or not re.match(r"[a-zà-ÿ0-9]", tok):
            return done(i)
        cur.append(tok)
        if len(cur) > _MAX_WORDS:  # no noun phrase: the list ends before it
            cur = []
            return done(i)
        i += 1
    return done(i)


def _head_list(question: str) -> list[str]:
    m = _HEAD_LIST.match(question)
    if not m:
        return []
    found = _conjuncts(m.group("rest"))
    if len(found.items) < 2 or found.ended != "of":
        return []
    # "list the lines and the length of their terms": a relative column, no head list
    if re.match(r"of\s+(?:their|its)\b", found.rest, re.I):
        return []
    return _list_columns(found.items, determined=found.determined)


def _possessive_lists(question: str) -> list[str]:
    out: list[str] = []
    for m in _POSSESSIVE_LIST.finditer(question):
        found = _conjuncts(question[m.end():])
        out += _list_columns(found.items, determined=found.determined)
    return out


def _listed_after(question: str) -> list[str]:
    """The columns a verb lists after a leading "for each X," clause (two at least) or at
    the start of a later sentence that asks for more ("Include the …")."""
    out: list[str] = []
    for rx, least in ((_PER_CLAUSE_LIST, 2), (_NEXT_SENTENCE_LIST, 1)):
        for m in rx.finditer(question):
            found = _conjuncts(question[m.end():])
            # "list the names and ages of its wells": a head list; "For each field, list
            # the wellbores": one noun phrase may be the answers themselves
            if found.ended == "of" or len(found.items) < least:
                continue
            out += _list_columns(found.items, determined=found.determined)
    return out


def _back_referred(item: str, after: str) -> str | None:
    """``item`` named again by the clause ``after`` it when that clause is about the answer
    ("the year it opened": "year opened"; "the size of their shares": "size shares"), so its
    verb or noun is evidence for the column too; ``None`` when it is not."""
    back = _BACK_REFERENCE.match(after.strip())
    if back is None:
        return None
    rest = after.strip()[back.end():]
    if back.group(0).lower().startswith("of"):
        of = _conjuncts(rest)[0]
        return " ".join([item, *of[:1]])
    verb = next((t for t in _TOKEN.findall(rest.lower())
                 if re.match(r"[a-zà-ÿ]", t) and t not in _STOP and t not in _AUX), None)
    return f"{item} {verb}" if verb else item


# "… the facility where it starts and the facility where it ends": after a noun phrase
# with a clause of its own, another one
_NEXT_NOUN_PHRASE = re.compile(r"^[^,?.!]*?\band\s+(?=(?:the|its|their)\b)", re.I)


def _comitatives(question: str) -> list[str]:
    """The columns after a comitative ("along with their X"); a noun phrase followed by a
    clause about the answer may be followed by another ("along with the facility where it
    starts and the facility where it ends": "facility starts", "facility ends")."""
    out: list[str] = []
    for m in _COMITATIVE.finditer(question):
        text = question[m.end():]
        for _ in range(4):
            found = _conjuncts(text)
            items = found.items
            back = _back_referred(items[-1], found.rest) if items else None
            if items and back is not None:
                items[-1] = back
            out += [i for i in items if not names_the_entity(i)]
            more = _NEXT_NOUN_PHRASE.match(found.rest) if back is not None else None
            if more is None:
                break
            text = found.rest[more.end():]
    return out


# "…, and, where known, who operates them?", "… and, if any, the company responsible":
# an optional-value cue set off between "and" and the column it qualifies
_AND_MAYBE = re.compile(r"\band\s*,\s*(?P<cue>[^,?.!]{2,30}?)\s*,\s*", re.I)


def _unparenthesized(question: str) -> tuple[str, list[int]]:
    """The question without the optional-value cues set off after an "and" ("and, where
    known, who …" → "and who …"), and where each cue was (in the returned text).

    Example:
        >>> _unparenthesized("Which pipes carry gas, and, where known, who runs them?")
        ('Which pipes carry gas, and who runs them?', [27])
    """
    out, at, last = [], [], 0
    for m in _AND_MAYBE.finditer(question):
        if not _MAYBE.fullmatch(m.group("cue").strip()) and not _MAYBE.match(m.group("cue")):
            continue
        out.append(question[last:m.start()] + "and ")
        at.append(sum(len(x) for x in out))
        last = m.end()
    out.append(question[last:])
    return "".join(out), at


def _relative_columns(question: str) -> list[str]:
    out: list[str] = []
    for m in _RELATIVE.finditer(question):
        found = _conjuncts(question[m.end():])
        if len(found.items) > 1:
            # "… with the test number and the top and base depth of each test": a list
            # of columns, each about the answer
            if _back_referred(found.items[-1], found.rest) is not None:
                out += _list_columns(found.items, determined=found.determined)
            continue
        if not found.items or names_the_entity(found.items[0]):
            continue
        column = _back_referred(found.items[0], found.rest)
        if column is not None:
            out.append(column)
    return out


def _wh_clause(question: str) -> list[str]:
    w = _AND_WH.search(question)
    if not w or w.group("wh").lower().endswith("many"):
        return []
    rest = _MAYBE.split(w.group("rest").lower())[0]  # "… where recorded" names no column
    content = [t for t in re.findall(r"[a-zà-ÿ][\w\-]*", rest)
               if t not in _STOP and t not in _AUX and t not in _PER]
    prep = (w.group("prep") or "").strip().lower()
    wh = w.group("wh").lower()
    # manner ("and how are they described?") asks for what its verb names, no amount
    hint = _WH_HINT.get(prep) or ("" if wh == "how" else _WH_HINT.get(wh.split()[0], ""))
    return [" ".join([*content[:3], hint]).strip() if content else
            RANKED_QUANTITY if hint == _WH_HINT["how"] else hint]


def _ranked_if_bare(phrase: str) -> str:
    """A column phrase that is a bare quantity noun ("and what is the figure?", "with their
    values") stands for the quantity the answers were ranked or compared by."""
    content = [t for t in phrase.split() if t not in _STOP]
    return RANKED_QUANTITY if content and all(t in _QUANTITY_NOUNS for t in content) \
        else phrase


def projections(question: str) -> tuple[str, ...]:
    """Phrases naming further answer columns, besides the answer entity itself.

    A name among them ("the names and depths of") is the entity's own column: left out.

    Example:
        >>> projections("List the names and lengths of all rivers")
        ('lengths',)
        >>> projections("Which ports are there, along with their country?")
        ('country',)
        >>> projections("For each port, give its country and its opening year.")
        ('country', 'opening year')
        >>> projections("List the lines and the towns they serve")
        ('towns serve',)
        >>> projections("List the ships and the company responsible for each.")
        ('company responsible',)
        >>> projections("For each pipe, give its name along with the station where it "
        ...             "starts and the station where it ends.")
        ('station starts', 'station ends')
    """
    question, _ = _unparenthesized(question)
    found = [*_head_list(question), *_comitatives(question), *_possessive_lists(question),
             *_listed_after(question), *_relative_columns(question), *_wh_clause(question)]
    found += [RANKED_QUANTITY] * bool(_WITH_QUANTITY.search(question))
    out = list(dict.fromkeys(_ranked_if_bare(p.strip().lower()) for p in found if p.strip()))
    # one column read twice ("… the year it was completed": "year" and "year completed")
    out = [p for p in out if not any(q != p and q.startswith(p + " ") for q in out)]
    low = question.lower()

    def at(phrase: str) -> int:  # in the order the question names them
        i = low.find(phrase.split()[0]) if phrase != RANKED_QUANTITY else -1
        return i if i >= 0 else len(low)

    return tuple(sorted(out, key=at))


def _first_at(low: str, phrase: str, start: int) -> int:
    """Where the first word of a column phrase occurs at or after ``start`` (``-1``: not)."""
    words_ = phrase.split()
    return low.find(words_[0], start) if words_ else -1


def optional_columns(question: str, phrases: tuple[str, ...]) -> frozenset[str]:
    """The column phrases whose value may be missing: each optional-value cue ("if any",
    "when there is one", "where a height is recorded") marks the column named last before
    it.

    Example:
        >>> optional_columns("List the books with their sequel, if any", ("sequel",))
        frozenset({'sequel'})
        >>> optional_columns("List the books with their sequel", ("sequel",))
        frozenset()
        >>> optional_columns("List the books and, where known, their sequel", ("sequel",))
        frozenset({'sequel'})
    """
    plain, set_off = _unparenthesized(question)
    out: set[str] = set()
    low_plain = plain.lower()
    for pos in set_off:  # "and, where known, who operates them": the column after the cue
        after = [(i, p) for p in phrases if (i := _first_at(low_plain, p, pos)) >= 0]
        if after:
            out.add(min(after)[1])
    low = question.lower()
    for cue in _MAYBE.finditer(low):
        if _AND_MAYBE.search(low[max(0, cue.start() - 8):cue.end() + 3]):
            continue  # set off after an "and": it qualifies what follows (above)
        at = {p: max((low.rfind(w, 0, cue.start()) for w in p.split()[:1]), default=-1)
              for p in phrases}
        before = [(pos, p) for p, pos in at.items() if pos >= 0]
        if before:
            out.add(max(before)[1])
    return frozenset(out)

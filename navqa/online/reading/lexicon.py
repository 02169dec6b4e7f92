"""The cue words of the offline backend: one typed lexicon, each entry a linguistic phenomenon.

Every word list the deterministic stages use lives here, as a :class:`Cue` naming the
phenomenon it covers (:class:`Phenomenon`). The entries are general English function and
cue words — determiners, auxiliaries, comparatives, superlatives, ordering and grouping
words, name particles — never a term of one VKG: a word that only helps one question of
one dataset does not belong here. Structure (what the question asks for, how the cues
combine) is parsed in :mod:`navqa.online.reading.question_shape`; this module only says which
words signal what.

Example:
    >>> "fewest" in words(Phenomenon.SUPERLATIVE_MIN)
    True
    >>> quantity_of("longest")
    'length'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from functools import cache


class Phenomenon(Enum):
    """The linguistic phenomenon a cue word signals."""

    STOPWORD = "function word carrying no content"
    FORM_WORD = "word about the question's form, not its content"
    WH_WORD = "interrogative opening"
    YES_NO = "auxiliary opening a yes/no question"
    AUXILIARY = "auxiliary or copula: ends a noun phrase"
    PERFECT = "perfect or do-support auxiliary: the verb after it is still active"
    BE_FORM = "form of 'be': a participle after it is passive (the subject undergoes it)"
    COUNT = "asks for a count"
    PER_GROUP = "distributive quantifier: one answer per group"
    SUPERLATIVE_MAX = "superlative towards the largest value"
    SUPERLATIVE_MIN = "superlative towards the smallest value"
    ORDINAL_FIRST = "ordinal: the first in a sequence"
    ORDINAL_LAST = "ordinal: the last in a sequence"
    SUPERLATIVE_DIMENSION = "the quantity a superlative adjective ranks by"
    ORDER_BY = "ordering verb without a bound"
    ORDER_ALPHABETICAL = "ordering by name"
    ORDER_ASC = "ascending direction"
    ORDER_DESC = "descending direction"
    COMPARATIVE_GT = "comparison: greater than"
    COMPARATIVE_GE = "comparison: at least"
    COMPARATIVE_LT = "comparison: less than"
    COMPARATIVE_LE = "comparison: at most"
    COMPARATIVE_GE_AFTER = "comparison after the number: 50 years or more"
    COMPARATIVE_LE_AFTER = "comparison after the number: 3 km or less"
    DATE_AFTER = "temporal preposition: after"
    DATE_SINCE = "temporal preposition: since (inclusive)"
    DATE_BEFORE = "temporal preposition: before"
    RANGE = "range: between … and …"
    NEGATION = "negation"
    ABSENCE = "absence of a value (no / without / lacking)"
    ABSENCE_QUALIFIER = "qualifier of an absent value (no known X)"
    CONJUNCTION = "coordination: both"
    DISJUNCTION = "coordination: either"
    COMITATIVE = "'along with': an extra answer column"
    QUANTITY_NOUN = "bare noun standing for the ranked or compared quantity: 'the figure'"
    COLUMN_VERB = "imperative asking for listed values: 'give their depths'"
    DISTRIBUTIVE = "distributive modifier of a column: 'their respective shares'"
    AGG_AVG = "aggregate: average"
    AGG_SUM = "aggregate: sum"
    AGG_MAX = "aggregate: maximum value"
    AGG_MIN = "aggregate: minimum value"
    NUMBER_WORD = "number written as a word"
    NAME_PARTICLE = "particle inside a proper name"
    MONTH = "calendar month"
    NAME_PROPERTY = "property word naming things"
    CODE_PROPERTY = "property word for a code or identifier"
    OPTIONAL_VALUE = "a value that may be missing: 'if any', 'when there is one'"
    OPTIONAL_QUALIFIER = "participle of a value that may be missing: 'where recorded'"
    SPATIAL_WITHIN = "spatial proximity: within a distance of"
    SPATIAL_BEYOND = "spatial remoteness: farther than a distance from"
    SPATIAL_DISTANCE = "asks for a distance"
    CURRENCY = "temporal deixis: what holds now"
    VALIDITY_START = "property word: the start of a validity interval"
    VALIDITY_END = "property word: the end of a validity interval"
    COUNT_SUPERLATIVE = "superlative of a number of things: the most / fewest X"
    COUNT_NOUN = "noun naming a number of things: the largest number of X"
    DISTINCT_WORD = "adjective asking for distinct things: more than 60 different X"
    COUNT_COLUMN = "asks to show a count beside the answers: …, and how many?"
    PER_YEAR = "one answer per calendar year"
    STRING_PREFIX = "a string pattern: the value starts with …"
    STRING_SUFFIX = "a string pattern: the value ends with …"
    STRING_CONTAINS = "a string pattern: the value contains … (before the pattern)"
    STRING_CONTAINED = "a string pattern: … in their name (after the pattern)"
    STRING_OWNER = "determiner before the property a string pattern applies to"
    POSSESSIVE = "possessive determiner"


@dataclass(frozen=True, slots=True)
class Cue:
    """One lexicon entry: words (or multi-word phrases) and the phenomenon they signal."""

    phenomenon: Phenomenon
    words: tuple[str, ...]


def _w(text: str) -> tuple[str, ...]:
    return tuple(text.split())


LEXICON: tuple[Cue, ...] = (
    Cue(Phenomenon.STOPWORD, _w(
        """a an the of in on at to for from by with and or but is are was were be been being
        do does did has have had there their its it this that these those which what who whom
        whose where when how many much any all each every some no not nor than then as into
        onto about per via same other me my we our you your they them he she his her i can
        could would should will shall may might must also only just still today currently ever
        now both either neither more most less least over under after before between during
        since until within without yet so such own one ones give list show tell find name
        names too""")),
    Cue(Phenomenon.FORM_WORD, _w("please whole entire overall total number")),
    Cue(Phenomenon.WH_WORD, ("how many", "how much", "which", "what", "who", "whom", "whose",
                             "when", "where", "in which", "in what", "list", "name", "give",
                             "show")),
    Cue(Phenomenon.YES_NO, _w("is are was were does do did has have had can could will")),
    Cue(Phenomenon.AUXILIARY, _w("""is are was were be been do does did has have had can will
        would should could may might must""")),
    Cue(Phenomenon.PERFECT, _w("has have had do does did")),
    Cue(Phenomenon.BE_FORM, _w("is are was were be been being")),
    Cue(Phenomenon.COUNT, ("how many", "number of", "count")),
    Cue(Phenomenon.PER_GROUP, _w("each every per")),
    Cue(Phenomenon.SUPERLATIVE_MAX, _w(
        """longest largest biggest highest most greatest fastest deepest newest latest maximum
        top heaviest tallest busiest youngest widest""")),
    Cue(Phenomenon.SUPERLATIVE_MIN, _w(
        """shortest smallest lowest fewest least earliest slowest minimum cheapest oldest
        narrowest lightest""")),
    Cue(Phenomenon.ORDINAL_FIRST, _w("first")),
    Cue(Phenomenon.ORDINAL_LAST, _w("last final")),
    Cue(Phenomenon.ORDER_BY, ("sorted by", "ordered by", "ranked by", "sort by", "order by",
                              "rank by", "in order of", "sorted", "ordered", "ranked")),
    Cue(Phenomenon.ORDER_ALPHABETICAL, ("alphabetically", "alphabetical", "by name",
                                        "by their names", "by their name")),
    Cue(Phenomenon.ORDER_ASC, ("ascending", "increasing", "earliest first", "oldest first",
                               "smallest first", "lowest first")),
    Cue(Phenomenon.ORDER_DESC, ("descending", "decreasing", "latest first", "newest first",
                                "largest first", "highest first", "most recent first")),
    # comparative adjectives of size, extent and age ("wider than 40 inches"), besides
    # "more than"; their antonyms are the LT cue
    Cue(Phenomenon.COMPARATIVE_GT, ("more than", "greater than", "larger than", "higher than",
                                    "longer than", "bigger than", "later than", "wider than",
                                    "deeper than", "taller than", "heavier than",
                                    "older than", "thicker than", "over", "above",
                                    "exceeding", "beyond")),
    Cue(Phenomenon.COMPARATIVE_GE, ("at least", "no fewer than", "no less than")),
    Cue(Phenomenon.COMPARATIVE_LT, ("less than", "fewer than", "smaller than", "lower than",
                                    "shorter than", "earlier than", "narrower than",
                                    "shallower than", "lighter than", "younger than",
                                    "thinner than", "under", "below")),
    Cue(Phenomenon.COMPARATIVE_LE, ("at most", "no more than", "up to")),
    Cue(Phenomenon.COMPARATIVE_GE_AFTER, ("or more", "or greater", "or higher", "or above",
                                          "or longer", "or larger", "or later", "or over",
                                          "and above", "and over", "and more", "and later")),
    Cue(Phenomenon.COMPARATIVE_LE_AFTER, ("or less", "or fewer", "or lower", "or below",
                                          "or shorter", "or smaller", "or earlier", "or under",
                                          "and below", "and under", "and less", "and earlier")),
    Cue(Phenomenon.DATE_AFTER, _w("after")),
    Cue(Phenomenon.DATE_SINCE, _w("since")),
    Cue(Phenomenon.DATE_BEFORE, _w("before")),
    Cue(Phenomenon.RANGE, ("between", "from")),
    Cue(Phenomenon.NEGATION, _w("not no without non never neither nor")),
    Cue(Phenomenon.ABSENCE, _w("no without lack lacks lacking")),
    Cue(Phenomenon.ABSENCE_QUALIFIER, _w("known recorded listed")),
    Cue(Phenomenon.CONJUNCTION, ("and", "as well as")),
    Cue(Phenomenon.DISJUNCTION, ("or", "either")),
    Cue(Phenomenon.COMITATIVE, ("along with", "together with", "with their", "with its",
                                "and their", "and its", "including", "as well as their",
                                "as well as its")),
    Cue(Phenomenon.QUANTITY_NOUN, _w("figure figures value values volume volumes amount "
                                     "amounts quantity quantities")),
    Cue(Phenomenon.COLUMN_VERB, ("list", "give", "show", "name", "provide", "report", "state",
                                 "return", "display", "include", "tell me")),
    Cue(Phenomenon.DISTRIBUTIVE, _w("respective corresponding individual")),
    Cue(Phenomenon.AGG_AVG, _w("average mean")),
    Cue(Phenomenon.AGG_SUM, _w("total sum")),
    Cue(Phenomenon.AGG_MAX, _w("highest maximum largest top greatest")),
    Cue(Phenomenon.AGG_MIN, _w("lowest minimum smallest")),
    Cue(Phenomenon.NUMBER_WORD, _w(
        "one two three four five six seven eight nine ten eleven twelve twenty hundred")),
    # English, Romance, Dutch and German particles inside proper names ("Frankfurt am Main",
    # "Rothenburg ob der Tauber", "Halle an der Saale")
    Cue(Phenomenon.NAME_PARTICLE, ("&", "and", "of", "the", "de", "del", "da", "di", "du",
                                   "van", "von", "der", "la", "le", "am", "an", "im", "ob",
                                   "bei", "zu", "zum", "zur", "auf")),
    Cue(Phenomenon.MONTH, _w("""month january february march april may june july august
        september october november december""")),
    Cue(Phenomenon.NAME_PROPERTY, _w("name label title")),
    Cue(Phenomenon.CODE_PROPERTY, _w("code number identifier acronym abbrev")),
    Cue(Phenomenon.OPTIONAL_VALUE, ("if any", "when there is one", "where there is one",
                                    "if there is one", "when there are any",
                                    "where there are any", "if there are any", "where applicable",
                                    "if applicable", "when applicable", "where possible")),
    Cue(Phenomenon.OPTIONAL_QUALIFIER, _w("known recorded listed available given stated "
                                          "specified provided")),
    Cue(Phenomenon.SPATIAL_WITHIN, ("within", "less than", "closer than", "no more than",
                                    "at most", "up to", "inside")),
    Cue(Phenomenon.SPATIAL_BEYOND, ("more than", "farther than", "further than", "beyond",
                                    "at least")),
    Cue(Phenomenon.SPATIAL_DISTANCE, ("how far", "how close", "distance between",
                                      "distance from", "distance to")),
    Cue(Phenomenon.CURRENCY, ("currently", "current", "today", "now", "presently",
                              "at present", "still", "nowadays", "these days",
                              "at the moment")),
    Cue(Phenomenon.VALIDITY_START, _w("from start started begin begins since effective")),
    Cue(Phenomenon.VALIDITY_END, _w("to end ended ends until till expiry expires expiration "
                                    "ceased")),
    Cue(Phenomenon.COUNT_SUPERLATIVE, _w("most fewest least")),
    Cue(Phenomenon.COUNT_NOUN, _w("number count")),
    Cue(Phenomenon.DISTINCT_WORD, _w("different distinct unique separate")),
    Cue(Phenomenon.COUNT_COLUMN, ("how many", "their counts", "their count", "their number",
                                  "their numbers", "with counts", "with the count",
                                  "with the number", "and the number", "the counts")),
    Cue(Phenomenon.PER_YEAR, ("each year", "every year", "per year", "by year", "yearly",
                              "annually", "year by year", "each calendar year")),
    Cue(Phenomenon.STRING_PREFIX, ("starting with", "starts with", "start with", "started with",
                                   "beginning with", "begins with", "begin with", "prefixed with",
                                   "prefixed by", "with the prefix", "with prefix")),
    Cue(Phenomenon.STRING_SUFFIX, ("ending in", "ending with", "ends in", "ends with", "end in",
                                   "end with", "suffixed with", "suffixed by",
                                   "with the suffix", "with suffix")),
    Cue(Phenomenon.STRING_CONTAINS, ("containing", "contains", "contain", "mentioning",
                                     "mentions", "mention", "including the word",
                                     "includes the word", "include the word",
                                     "with the word", "featuring")),
    Cue(Phenomenon.STRING_CONTAINED, ("in", "within", "somewhere in", "anywhere in")),
    Cue(Phenomenon.STRING_OWNER, _w("a an the with")),
    Cue(Phenomenon.POSSESSIVE, _w("their its his her whose")),
)
"""Every cue word, by phenomenon (a phenomenon may have one entry only)."""

NUMBER_VALUES: dict[str, int] = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "twenty": 20, "hundred": 100}
"""The value of each :attr:`Phenomenon.NUMBER_WORD`."""

SUPERLATIVE_DIMENSIONS: dict[str, str] = {
    "longest": "length", "shortest": "length", "largest": "size population area",
    "smallest": "size population area", "highest": "value", "lowest": "value",
    "fastest": "speed", "slowest": "speed", "oldest": "date year founded",
    "newest": "date year", "earliest": "time date start", "latest": "time date",
    "deepest": "depth", "busiest": "number", "first": "sequence order",
    "last": "sequence order", "final": "sequence order", "biggest": "size",
    "heaviest": "weight mass", "tallest": "height", "widest": "width",
    "narrowest": "width", "lightest": "weight mass", "youngest": "date year",
}
"""The quantity a superlative adjective usually ranks by (``SUPERLATIVE_DIMENSION``)."""

_ENTRIES = {c.phenomenon: c for c in LEXICON}
assert len(_ENTRIES) == len(LEXICON), "one entry per phenomenon"


@cache
def words(phenomenon: Phenomenon) -> frozenset[str]:
    """The cue words (and phrases) of ``phenomenon``."""
    entry = _ENTRIES.get(phenomenon)
    return frozenset(entry.words) if entry else frozenset()


@cache
def pattern(phenomenon: Phenomenon) -> str:
    r"""A regex alternation matching any cue of ``phenomenon`` as whole words.

    Example:
        >>> import re
        >>> bool(re.search(pattern(Phenomenon.COMPARATIVE_LT), "fewer  than 3"))
        True
    """
    entry = _ENTRIES[phenomenon]
    alts = sorted(entry.words, key=len, reverse=True)
    body = "|".join(r"\s+".join(re.escape(p) for p in a.split()) for a in alts)
    return rf"(?<![\w-])(?:{body})(?![\w-])"


def superlative_direction(word: str) -> str | None:
    """``"max"``/``"min"`` for a superlative (or ordinal) word, else ``None``."""
    w = word.lower()
    if w in words(Phenomenon.SUPERLATIVE_MAX) or w in words(Phenomenon.ORDINAL_LAST):
        return "max"
    if w in words(Phenomenon.SUPERLATIVE_MIN) or w in words(Phenomenon.ORDINAL_FIRST):
        return "min"
    return None


def quantity_of(word: str) -> str:
    """The quantity a superlative adjective ranks by ("" when none is known)."""
    return SUPERLATIVE_DIMENSIONS.get(word.lower(), "")


def aggregate_of(word: str) -> str | None:
    """The SPARQL aggregate an aggregate word names (``AVG``, ``SUM``, ``MAX``, ``MIN``)."""
    w = word.lower()
    for ph, agg in ((Phenomenon.AGG_AVG, "AVG"), (Phenomenon.AGG_SUM, "SUM"),
                    (Phenomenon.AGG_MAX, "MAX"), (Phenomenon.AGG_MIN, "MIN")):
        if w in words(ph):
            return agg
    return None

"""Execution-based metrics: NaVQA §4.2 (F1, Acc, NR) and SAGA's EM and empty-result rate.

Canonical form (NaVQA §4.2)
    A result row is a **multiset of RDF terms**: variable names and their order are
    ignored (``SELECT ?s ?o`` equals ``SELECT ?o ?s``) and an unbound variable contributes
    nothing. A result is a **multiset of rows**, so duplicates count. CONSTRUCT/DESCRIBE
    results are multisets of triples, each triple a row of three terms.

Term equality
    * IRIs: by their string.
    * Blank nodes: all equal to each other (labels are local to one result).
    * Numeric literals (``xsd:integer``, ``xsd:decimal``, ``xsd:float``, ``xsd:double`` and
      the integer subtypes): by numeric value, so ``"5"^^xsd:integer`` equals
      ``"5.0"^^xsd:decimal``. Float and double values are rounded to 15 significant
      digits first (binary floating-point noise); integers and decimals are exact. A
      numeric literal whose lexical form is invalid compares as an ordinary literal.
    * ``xsd:boolean``: by value (``"1"`` equals ``"true"``).
    * Other literals: by (lexical form, datatype, language tag). A simple literal is an
      ``xsd:string`` (RDF 1.1); language tags compare case-insensitively.

Per question, with ``G`` the gold multiset and ``P`` the predicted one
    * ``|P ∩bag G| = Σ_r min(count(r, P), count(r, G))``
    * precision ``= |P ∩bag G| / |P|``, recall ``= |P ∩bag G| / |G|``, F1 their harmonic
      mean (0 when both are 0).
    * **Empty vs empty**: when ``G`` and ``P`` are both empty, precision = recall = F1 = 1
      and Acc = EM = 1. When exactly one of them is empty, precision = recall = F1 = 0.
    * **Acc**: 1 iff ``P`` and ``G`` are equal as multisets (NaVQA's ``≡``).
    * **EM** (SAGA): 1 iff the *sets* of rows are equal (duplicates ignored).
    * **NR**: 1 iff the predicted query ran and returned at least one row. An ASK
      answer (true or false) always counts as non-empty.
    * **Ordered gold** (the gold query's outermost solution modifiers include ORDER BY
      *and* LIMIT, i.e. a top-k question): Acc additionally requires the ranked lists to
      agree position by position (same length, the i-th rows equal as multisets of
      terms). F1 and EM stay order-blind (bag and set respectively).
    * **ASK**: the answers compare as booleans: precision = recall = F1 = Acc = EM = 1
      iff they are equal, else 0. An ASK gold against a SELECT prediction (or the other
      way round) scores 0.
    * A question without a predicted result (no query, syntax error, execution error,
      timeout) scores 0 everywhere.

Aggregates over N questions are plain means (macro averages): ``F1 = Σ F1_i / N`` etc.;
the empty-result rate is the fraction of questions whose predicted query ran and
returned nothing (the outcome ``silent-failure``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from decimal import Decimal, InvalidOperation, localcontext
from typing import Any

from navqa.model.terms import (
    AskResult,
    BNodeTerm,
    GraphResult,
    IRITerm,
    LiteralTerm,
    QueryResult,
    SelectResult,
    Term,
)
from navqa.model.xsd import (
    FLOAT_TYPES,
    INTEGER_TYPES,
    LANG_STRING,
    NUMERIC_TYPES,
    XSD_BOOLEAN,
    XSD_STRING,
)

__all__ = [
    "CanonicalRow",
    "CanonicalTerm",
    "Score",
    "bag_scores",
    "canonical_row",
    "canonical_rows",
    "canonical_term",
    "score",
]

CanonicalTerm = tuple[str, str, str, str]
"""``(kind, value, datatype, lang)``: hashable and orderable."""

CanonicalRow = tuple[CanonicalTerm, ...]
"""A row as a sorted tuple of canonical terms (a multiset)."""

_FLOAT_DIGITS = 15


def _numeric_key(lexical: str, datatype: str) -> str | None:
    text = lexical.strip()
    if datatype in FLOAT_TYPES:
        special = {"INF": "Infinity", "+INF": "Infinity", "-INF": "-Infinity", "NaN": "NaN"}
        if text in special:
            return special[text]
    try:
        value = Decimal(text)
    except InvalidOperation:
        return None
    if not value.is_finite():
        return None  # "Infinity"/"nan" spellings are not valid xsd lexical forms
    if datatype in INTEGER_TYPES and value != value.to_integral_value():
        return None
    if datatype in FLOAT_TYPES:
        with localcontext() as ctx:
            ctx.prec = _FLOAT_DIGITS
            value = +value
    if value == 0:
        return "0"
    return str(value.normalize())


def canonical_term(term: Term) -> CanonicalTerm:
    """The comparison key of one term (see the module docstring for the rules)."""
    if isinstance(term, IRITerm):
        return ("iri", term.value, "", "")
    if isinstance(term, BNodeTerm):
        return ("bnode", "", "", "")
    if isinstance(term, LiteralTerm):
        if term.lang:
            return ("lit", term.value, LANG_STRING, term.lang.lower())
        datatype = term.datatype or XSD_STRING
        if datatype in NUMERIC_TYPES:
            key = _numeric_key(term.value, datatype)
            if key is not None:
                return ("num", key, "", "")
        if datatype == XSD_BOOLEAN and term.value.strip() in ("true", "false", "1", "0"):
            return ("bool", "true" if term.value.strip() in ("true", "1") else "false", "", "")
        return ("lit", term.value, datatype, "")
    raise TypeError(f"not an RDF term: {term!r}")


def canonical_row(row: Iterable[Term | None]) -> CanonicalRow:
    """A row as a multiset of terms: unbound values dropped, variable order ignored."""
    return tuple(sorted(canonical_term(t) for t in row if t is not None))


def canonical_rows(result: QueryResult) -> list[CanonicalRow]:
    """The rows of a SELECT (or the triples of a CONSTRUCT) result, in result order.

    Raises:
        TypeError: for an ASK result, which has no rows.
    """
    if isinstance(result, SelectResult):
        return [canonical_row(r) for r in result.rows]
    if isinstance(result, GraphResult):
        return [canonical_row(t) for t in result.triples]
    raise TypeError("an ASK result has no rows")


@dataclass(frozen=True)
class Score:
    """The metrics of one question.

    Attributes:
        precision / recall / f1: Bag-based (NaVQA §4.2), in ``[0, 1]``.
        acc: Multiset equivalence (position-wise too when ``ordered``).
        em: Set equivalence (SAGA).
        nonempty: The prediction ran and returned something.
        ordered: Whether order was part of Acc (gold is ORDER BY … LIMIT).
        gold_size / pred_size / overlap: ``|G|``, ``|P|``, ``|P ∩bag G|`` (1/1/1 or
            1/1/0 for ASK).
    """

    precision: float
    recall: float
    f1: float
    acc: bool
    em: bool
    nonempty: bool
    ordered: bool = False
    gold_size: int = 0
    pred_size: int = 0
    overlap: int = 0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def bag_scores(gold: Sequence[CanonicalRow], pred: Sequence[CanonicalRow]
               ) -> tuple[float, float, float, int]:
    """Precision, recall, F1 and overlap of two multisets of rows (empty vs empty = 1)."""
    if not gold and not pred:
        return 1.0, 1.0, 1.0, 0
    if not gold or not pred:
        return 0.0, 0.0, 0.0, 0
    g, p = Counter(gold), Counter(pred)
    overlap = sum((g & p).values())
    precision = overlap / len(pred)
    recall = overlap / len(gold)
    f1 = 0.0 if overlap == 0 else 2 * precision * recall / (precision + recall)
    return precision, recall, f1, overlap


def score(gold: QueryResult, pred: QueryResult | None, *, ordered: bool = False) -> Score:
    """Score a predicted result against the gold one.

    Args:
        gold: The gold query's result.
        pred: The predicted query's result, or ``None`` when there is none.
        ordered: The gold query is ORDER BY … LIMIT: Acc compares ranked lists.

    Returns:
        The per-question :class:`Score`.
    """
    if pred is None:
        return Score(0.0, 0.0, 0.0, False, False, False, ordered=ordered,
                     gold_size=_size(gold))
    nonempty = not pred.is_empty
    if isinstance(gold, AskResult) or isinstance(pred, AskResult):
        same = (isinstance(gold, AskResult) and isinstance(pred, AskResult)
                and gold.value == pred.value)
        v = 1.0 if same else 0.0
        return Score(v, v, v, same, same, nonempty, ordered=False, gold_size=_size(gold),
                     pred_size=_size(pred), overlap=int(same))
    g_rows = canonical_rows(gold)
    p_rows = canonical_rows(pred)
    precision, recall, f1, overlap = bag_scores(g_rows, p_rows)
    acc = g_rows == p_rows if ordered else Counter(g_rows) == Counter(p_rows)
    em = set(g_rows) == set(p_rows)
    return Score(precision, recall, f1, acc, em, nonempty, ordered=ordered,
                 gold_size=len(g_rows), pred_size=len(p_rows), overlap=overlap)


def _size(result: QueryResult) -> int:
    if isinstance(result, AskResult):
        return 1
    return len(result)

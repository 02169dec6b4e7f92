"""Why did a query come back empty? Static checks against the schema index and Θ, plus
bounded probes of the literals it compares with.

In a VKG an empty result is the failure to explain. The agent's ``execute`` returns an
empty result with a warning naming the likely cause, and the offline repairs start from
the same findings:

``domain-conflict`` / ``range-conflict``
    ``?x p ?y`` where Θ types ``?x`` (``?y``) and δ(p) (ρ(p)) is known and incompatible;
``template-join``
    a variable used in positions whose IRI templates never unify (``?x`` is the subject
    of a property whose subjects are ``…/service/{}`` IRIs and the object of one whose
    objects are ``…/company/{}`` IRIs), or used both as a literal and as an IRI;
``literal-datatype``
    a literal (in a triple or a FILTER comparison) whose datatype does not fit the
    property's (``npdv:isDiscoveryWellbore`` holds strings, not ``true``);
``literal-value``
    a string constant the property never holds, with the stored spelling when a
    case-insensitive probe finds it (``"Troll"`` → ``"TROLL"``).

Every probe is bounded (``ASK`` or ``LIMIT``) and names one property.
"""

from __future__ import annotations

from dataclasses import dataclass

from navqa.backends.protocols import SparqlEndpoint
from navqa.errors import EndpointError, EndpointUnreachableError
from navqa.model.iri import IRI, RDF_TYPE
from navqa.model.terms import LiteralTerm, escape_string
from navqa.model.xsd import XsdFamily, family
from navqa.online.context import SchemaContext
from navqa.online.saga.schema_index import templates_unify
from navqa.online.saga.sparql_text import QueryText
from navqa.online.saga.typestate import TypeState, classes_text
from navqa.online.sparql_analysis import comparisons

__all__ = ["Finding", "diagnose", "datatype_kind", "render_findings"]


@dataclass(frozen=True)
class Finding:
    """One likely cause of an empty result.

    Attributes:
        kind: See the module docstring.
        message: One sentence for a person or an LLM.
        triple: Index of the triple pattern in :attr:`QueryText.triples`, if any.
        filter: Index of the FILTER in :attr:`QueryText.filters`, if any.
        prop: The property involved.
        var: The variable (or ``<iri>``) involved.
        stored: For ``literal-value``/``literal-datatype``: the form to use instead.
    """

    kind: str
    message: str
    triple: int | None = None
    filter: int | None = None
    prop: IRI | None = None
    var: str | None = None
    stored: str | None = None


_KINDS = {XsdFamily.STRING: "string", XsdFamily.LANG: "string", XsdFamily.YEAR: "year",
          XsdFamily.NUMERIC: "number", XsdFamily.DATE: "date", XsdFamily.DATETIME: "date",
          XsdFamily.TIME: "time", XsdFamily.BOOLEAN: "boolean"}


def datatype_kind(dt: str | None) -> str:
    """``number``, ``date``, ``time``, ``year``, ``boolean``, ``string`` or ``other``: the
    :func:`navqa.model.xsd.family` of ``dt`` as the agent's messages name it (a plain
    literal is a string; ``xsd:date`` and ``xsd:dateTime`` are both dates)."""
    fam = family(dt)
    return "other" if fam is None else _KINDS.get(fam, "other")


def _key(qt: QueryText, term: object) -> str | None:
    from navqa.online.saga.sparql_text import Term

    assert isinstance(term, Term)
    if term.is_var:
        return term.text
    iri = qt.iri(term)
    return f"<{iri}>" if iri is not None and term.kind != "a" else None


def diagnose(ctx: SchemaContext, theta: TypeState, sparql: str, *,
             endpoint: SparqlEndpoint | None = None, timeout: float | None = 30.0,
             probe_literals: bool = True) -> list[Finding]:
    """The likely causes of an empty result, most specific first.

    ``theta`` must already have observed the query (:meth:`TypeState.observe_query`).

    Raises:
        EndpointUnreachableError: from a probe (a dead endpoint is never "no cause").
    """
    try:
        qt = QueryText.parse(sparql)
    except ValueError:
        return []
    index = theta.tfilter.index
    out: list[Finding] = []
    c = ctx.compact
    # 1. δ/ρ against Θ
    for tp in qt.triples:
        prop = qt.iri(tp.p)
        if prop is None or prop == RDF_TYPE or tp.p.kind == "path":
            continue
        for term, direction, kind in ((tp.s, "out", "domain-conflict"),
                                      (tp.o, "in", "range-conflict")):
            if direction == "in" and ctx.is_data_property(prop):
                continue
            key = _key(qt, term)
            if key is None or not theta.of(key):
                continue
            if not theta.compatible(key, prop, direction):
                side = index.get(prop).domain if direction == "out" else index.get(prop).range
                src = ", ".join(sorted(s.value for s in side.sources)) or "schema"
                what = "subjects" if direction == "out" else "objects"
                out.append(Finding(
                    kind, f"{c(prop)} has {what} of type {classes_text(ctx, side.classes)} "
                          f"({src}), but {key} is a {classes_text(ctx, theta.of(key))}: "
                          f"the pattern can never match",
                    triple=tp.index, prop=prop, var=key))
    # 2. IRI templates of each variable's positions
    if not any(f.kind.endswith("conflict") for f in out):
        out += _template_joins(ctx, theta, qt)
    # 3. literal datatypes
    out += _literal_datatypes(ctx, theta, qt, sparql)
    # 4. literal values
    if endpoint is not None and probe_literals:
        out += _literal_values(ctx, qt, endpoint, timeout)
    return out


def _positions(ctx: SchemaContext, theta: TypeState, qt: QueryText
               ) -> dict[str, list[tuple[str, frozenset[str], bool, bool, int]]]:
    """Per variable: (description, template keys, open, is_literal, triple index)."""
    index = theta.tfilter.index
    pos: dict[str, list[tuple[str, frozenset[str], bool, bool, int]]] = {}
    for tp in qt.triples:
        prop = qt.iri(tp.p)
        if prop is None or tp.p.kind == "path":
            continue
        if prop == RDF_TYPE:
            cls = qt.iri(tp.o)
            if tp.s.is_var and cls is not None:
                keys, open_ = index.instance_templates(cls)
                pos.setdefault(tp.s.text, []).append(
                    (f"a {ctx.compact(cls)}", keys, open_, False, tp.index))
            continue
        e = index.get(prop)
        if tp.s.is_var:
            pos.setdefault(tp.s.text, []).append(
                (f"the subject of {ctx.compact(prop)}", e.domain.templates, e.domain.open,
                 False, tp.index))
        if tp.o.is_var:
            if e.is_data:
                pos.setdefault(tp.o.text, []).append(
                    (f"the value of {ctx.compact(prop)}", frozenset(), False, True, tp.index))
            else:
                pos.setdefault(tp.o.text, []).append(
                    (f"the object of {ctx.compact(prop)}", e.range.templates, e.range.open,
                     False, tp.index))
    return pos


def _template_joins(ctx: SchemaContext, theta: TypeState, qt: QueryText) -> list[Finding]:
    out: list[Finding] = []
    for var, ps in _positions(ctx, theta, qt).items():
        done = False
        for i, a in enumerate(ps):
            for b in ps[i + 1:]:
                if a[3] != b[3]:
                    lit, iri = (a, b) if a[3] else (b, a)
                    out.append(Finding(
                        "template-join", f"{var} is {lit[0]} (a literal) and {iri[0]} (an "
                                         "IRI): it can never be both", triple=iri[4], var=var))
                    done = True
                elif not a[3] and a[1] and b[1] and not a[2] and not b[2] and \
                        not templates_unify(a[1], b[1]):
                    out.append(Finding(
                        "template-join",
                        f"{var} is {a[0]} (IRIs {_tpl(a[1])}) and {b[0]} (IRIs {_tpl(b[1])}): "
                        "these IRI templates never produce the same IRI, so the join is "
                        "always empty", triple=b[4], var=var))
                    done = True
                if done:
                    break
            if done:
                break
    return out


def _tpl(keys: frozenset[str]) -> str:
    shown = sorted(keys)[:2]
    return ", ".join(k.rsplit("/", 2)[-2] + "/" + k.rsplit("/", 1)[-1] if k.count("/") > 2
                     else k for k in shown) + (" …" if len(keys) > 2 else "")


def _literal_datatypes(ctx: SchemaContext, theta: TypeState, qt: QueryText,
                       sparql: str) -> list[Finding]:
    index = theta.tfilter.index
    out: list[Finding] = []
    value_of: dict[str, IRI] = {}
    for tp in qt.triples:
        prop = qt.iri(tp.p)
        if prop is None or prop == RDF_TYPE or not ctx.is_data_property(prop):
            continue
        dts = index.datatypes(prop) or frozenset(filter(None, [ctx.datatype(prop)]))
        kinds = {datatype_kind(d) for d in dts} - {"other"}
        if tp.o.is_var:
            value_of[tp.o.text] = prop
            continue
        lit = qt.literal(tp.o)
        if lit is None or not kinds:
            continue
        k = datatype_kind(lit[1])
        if k not in kinds:
            want = sorted(kinds)[0]
            out.append(Finding(
                "literal-datatype",
                f"{ctx.compact(prop)} holds {want} values, but the query gives it "
                f"{tp.o.text} ({k})", triple=tp.index, prop=prop, stored=want))
    # FILTER comparisons ?v op literal
    from navqa.errors import SparqlSyntaxError
    from navqa.online.check import parse

    try:
        algebra = parse(sparql)
    except SparqlSyntaxError:
        return out  # the text-level findings above are all a broken query gets
    found = [(f"?{c.var}", lit) for c in comparisons(algebra) for lit in c.literals]
    for var, constant in found:
        prop = value_of.get(var)
        if prop is None:
            continue
        dts = index.datatypes(prop) or frozenset(filter(None, [ctx.datatype(prop)]))
        kinds = {datatype_kind(d) for d in dts} - {"other"}
        k = datatype_kind(str(constant.datatype) if constant.datatype else None)
        if kinds and k not in kinds:
            fi = next((i for i, f in enumerate(qt.filters) if var in f.text), None)
            out.append(Finding(
                "literal-datatype",
                f"{var} is a value of {ctx.compact(prop)} ({'/'.join(sorted(kinds))}), but the "
                f"FILTER compares it with {constant.n3()} ({k})", filter=fi, prop=prop, var=var,
                stored="/".join(sorted(kinds))))
    return out


def _literal_values(ctx: SchemaContext, qt: QueryText, endpoint: SparqlEndpoint,
                    timeout: float | None) -> list[Finding]:
    out: list[Finding] = []
    for tp in qt.triples:
        prop = qt.iri(tp.p)
        lit = qt.literal(tp.o)
        if prop is None or lit is None or tp.o.kind != "literal":
            continue
        value, dt = lit
        if datatype_kind(dt) != "string" or not value.strip():
            continue
        try:
            written = tp.o.text if "^^" not in tp.o.text else _lit(value)
            if endpoint.ask(f"ASK {{ ?s <{prop}> {written} }}", timeout=timeout).value:
                continue
            stored = _probe(endpoint, prop, value, timeout, exact=True) or \
                _probe(endpoint, prop, value, timeout, exact=False)
        except EndpointUnreachableError:
            raise
        except EndpointError:
            continue
        if stored:
            out.append(Finding(
                "literal-value", f"no {ctx.compact(prop)} is {_lit(value)}; the data has "
                                 f"{_lit(stored)}", triple=tp.index, prop=prop, stored=stored))
        else:
            out.append(Finding(
                "literal-value", f"no {ctx.compact(prop)} value matches {_lit(value)}, not "
                                 "even ignoring case", triple=tp.index, prop=prop))
    return out


def _lit(v: str) -> str:
    return f'"{escape_string(v)}"'


def _probe(endpoint: SparqlEndpoint, prop: IRI, value: str, timeout: float | None, *,
           exact: bool) -> str | None:
    low = escape_string(value.lower())
    cond = f'LCASE(STR(?v)) = "{low}"' if exact else f'CONTAINS(LCASE(STR(?v)), "{low}")'
    res = endpoint.select(f"SELECT DISTINCT ?v WHERE {{ ?s <{prop}> ?v . FILTER({cond}) }} "
                          "LIMIT 5", timeout=timeout)
    vals = sorted((r[0].value for r in res.rows if isinstance(r[0], LiteralTerm)), key=len)
    return vals[0] if vals else None


def render_findings(findings: list[Finding], limit: int = 3) -> str:
    """The warning shown with an empty result."""
    if not findings:
        return ("[WARNING] empty result, and no type conflict was found: check the constants "
                "and try a different property or path (see the Knowledge Log)")
    lines = [f"[WARNING] empty result; likely cause: {f.message}" if i == 0 else
             f"  also: {f.message}" for i, f in enumerate(findings[:limit])]
    return "\n".join(lines)

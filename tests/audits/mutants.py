"""Mutation generator for the lint: break gold queries in ways that make them silently empty.

Two operators, each applied at most once per gold query, deterministically (seeded):

``unmapped-swap``
    Replace one mapped class or property the query uses by an **unmapped** element of
    the same kind nearby in the ontology (a sibling, super- or sub-element, or a property
    sharing a domain or range; failing that, any unmapped element of the kind in the same
    namespace). Unmapped = declared but outside the active ontology, so no mapping and no
    reasoning populates it.
``template-break``
    Reuse a variable of a *required* triple pattern ``?x P …`` (subject) or ``… P ?x``
    (object of an object property) as the subject of a new pattern ``?x Q ?fresh``, where
    no subject IRI template Q can produce unifies with any template P produces at that
    position. P's and Q's templates are read straight from the mapping atoms of the
    property, its sub-properties and inverses (everything OWL 2 QL lets produce a
    property assertion), so the join is empty by construction — this oracle does not use
    the lint's code.

The oracle is independent of :mod:`navqa.audits`: it reads the mappings and the ontology
model and uses :meth:`IriTemplate.unifies` (the definition of template overlap).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from rdflib import URIRef
from rdflib.plugins.sparql import parser as sparql_parser
from rdflib.plugins.sparql.algebra import translateQuery
from rdflib.term import Variable

from navqa.model.iri import RDF_TYPE, namespace
from navqa.model.mapping import TermKind, TermType
from navqa.model.template import IriTemplate

_PREFIX = re.compile(r"PREFIX\s+([A-Za-z][\w\-.]*)?:\s*<([^<>\s]*)>", re.I)


@dataclass(frozen=True)
class Mutant:
    """A broken query and how it was made."""

    source_id: str
    operator: str
    sparql: str
    detail: str


def _prefixes(text: str) -> dict[str, str]:
    return {m.group(1) or "": m.group(2) for m in _PREFIX.finditer(text)}


def _body_start(text: str) -> int:
    ends = [m.end() for m in _PREFIX.finditer(text)]
    return max(ends) if ends else 0


def _occurrence(text: str, iri: str) -> tuple[int, int] | None:
    """Where ``iri`` is written in the query body (full or prefixed form)."""
    start = _body_start(text)
    pats = [re.escape(f"<{iri}>")]
    for p, ns in _prefixes(text).items():
        if ns and iri.startswith(ns):
            local = iri[len(ns):]
            pats.append(rf"(?<![\w\-.:]){re.escape(p)}:{re.escape(local)}(?![\w\-:])")
    best = None
    for pat in pats:
        m = re.compile(pat).search(text, start)
        if m and (best is None or m.start() < best[0]):
            best = (m.start(), m.end())
    return best


class MutationGenerator:
    """Mutants of the gold queries of one VKG (see the module docstring)."""

    def __init__(self, bundle, seed: int = 20260455) -> None:
        self.onto = bundle.ontology
        self.maps = bundle.mappings
        self.active = bundle.active
        self.rng = random.Random(seed)
        self.unmapped_classes = sorted(c for c in self.onto.classes if c not in
                                       self.active.signature)
        self.unmapped_props = sorted(p for p in self.onto.properties if p not in
                                     self.active.signature)
        self._shapes: dict[str, tuple[set, set]] = {}

    # -- the oracle -------------------------------------------------------------------

    def _subproperties(self, p: str) -> set[str]:
        out = {p}
        changed = True
        while changed:
            changed = False
            for q in self.onto.properties.values():
                if q.iri not in out and (q.parents | q.equivalents) & out:
                    out.add(q.iri)
                    changed = True
        return out

    def _inverse_of(self, p: str) -> set[str]:
        out = set()
        for q in self.onto.object_properties.values():
            if p in q.inverses:
                out.add(q.iri)
            if q.iri == p:
                out |= q.inverses
        return out

    def property_templates(self, p: str) -> tuple[set[str] | None, set[str] | None]:
        """(subject keys, object keys) p can produce; ``None`` when a position is not
        purely IRI-template-valued (a column IRI, a constant, a literal, a blank node)."""
        if p in self._shapes:
            return self._shapes[p]
        subj: set[str] | None = set()
        obj: set[str] | None = set()
        pairs = []
        for q in self._subproperties(p):
            for _, atom in self.maps.atoms_for(q):
                if not atom.is_class and atom.object is not None:
                    pairs.append((atom.subject, atom.object))
            for inv in self._inverse_of(q):
                for sub_inv in self._subproperties(inv):
                    for _, atom in self.maps.atoms_for(sub_inv):
                        if not atom.is_class and atom.object is not None:
                            pairs.append((atom.object, atom.subject))

        def key(tm) -> str | None:
            if tm.term_type is TermType.IRI and tm.kind is TermKind.TEMPLATE:
                k = IriTemplate(tm.value).key
                return None if k == "{}" else k
            return None

        for s, o in pairs:
            ks, ko = key(s), key(o)
            if subj is not None:
                subj = None if ks is None else subj | {ks}
            if obj is not None:
                obj = None if ko is None else obj | {ko}
        result = (subj or None, obj or None)
        self._shapes[p] = result
        return result

    @staticmethod
    def disjoint(a: set[str], b: set[str]) -> bool:
        return not any(IriTemplate(x).unifies(IriTemplate(y)) for x in a for y in b)

    # -- required triples ---------------------------------------------------------------

    @staticmethod
    def required_triples(sparql: str) -> list[tuple[object, object, object]]:
        """Triples every solution must match: not under OPTIONAL's right side, UNION,
        MINUS's right side or a sub-SELECT."""
        algebra = translateQuery(sparql_parser.parseQuery(sparql)).algebra
        out = []

        def walk(node) -> None:
            name = getattr(node, "name", "")
            if name == "BGP":
                out.extend(tuple(t) for t in node.triples)
            elif name in ("Join",):
                walk(node.p1)
                walk(node.p2)
            elif name in ("LeftJoin", "Minus"):
                walk(node.p1)
            elif name in ("Union", "ToMultiSet", "values"):
                return
            elif hasattr(node, "get") and node.get("p") is not None:
                walk(node.p)

        walk(algebra.get("p"))
        return out

    # -- operators ------------------------------------------------------------------------

    def _near(self, iri: str, is_class: bool) -> list[str]:
        onto = self.onto
        pool = self.unmapped_classes if is_class else self.unmapped_props
        if not pool:
            return []
        near: set[str] = set()
        if is_class:
            c = onto.classes.get(iri)
            if c is not None:
                for parent in c.parents:
                    near |= onto.subclasses(parent, reflexive=False)
                    near |= onto.superclasses(parent)
                near |= onto.subclasses(iri) | onto.superclasses(iri)
        else:
            p = onto.property(iri)
            if p is not None:
                kind = p.kind
                doms, rngs = onto.inherited_domains(iri), onto.inherited_ranges(iri)
                for q in onto.properties.values():
                    if q.kind is not kind:
                        continue
                    if (q.parents & p.parents) or iri in q.parents or q.iri in p.parents \
                            or doms & onto.inherited_domains(q.iri) \
                            or (rngs and rngs & onto.inherited_ranges(q.iri)):
                        near.add(q.iri)
            pool = [x for x in pool if p is None or onto.property(x) is None
                    or onto.property(x).kind is p.kind]
        cands = sorted(x for x in near if x in pool)
        if not cands:
            cands = sorted(x for x in pool if namespace(x) == namespace(iri))
        return cands or list(pool)

    def unmapped_swap(self, qid: str, sparql: str) -> Mutant | None:
        from navqa.online.check import parse, used_terms

        preds, classes = used_terms(parse(sparql))
        terms = sorted(t for t in preds | classes
                       if t in self.active.mapped and t in self.onto.signature)
        self.rng.shuffle(terms)
        for term in terms:
            where = _occurrence(sparql, term)
            if where is None:
                continue
            cands = self._near(term, term in self.onto.classes)
            if not cands:
                continue
            new = self.rng.choice(cands)
            text = sparql[: where[0]] + f"<{new}>" + sparql[where[1]:]
            return Mutant(qid, "unmapped-swap", text, f"{term} -> {new}")
        return None

    def template_break(self, qid: str, sparql: str) -> Mutant | None:
        triples = self.required_triples(sparql)
        cands = []
        for s, p, o in triples:
            if not isinstance(p, URIRef) or str(p) == RDF_TYPE:
                continue
            subj, obj = self.property_templates(str(p))
            if isinstance(s, Variable) and subj:
                cands.append((s, subj, str(p), "subject"))
            if isinstance(o, Variable) and obj and str(p) in self.onto.object_properties:
                cands.append((o, obj, str(p), "object"))
        self.rng.shuffle(cands)
        qs = sorted(self.maps.properties())
        for var, keys, p, pos in cands:
            options = []
            for q in qs:
                qsubj, _ = self.property_templates(q)
                if qsubj and self.disjoint(keys, qsubj):
                    options.append(q)
            if not options:
                continue
            q = self.rng.choice(options)
            m = re.search(r"\bWHERE\s*\{|\bASK\s*\{", sparql, re.I)
            brace = sparql.index("{", m.start()) if m else sparql.index("{", _body_start(sparql))
            text = (sparql[: brace + 1] + f"\n  ?{var} <{q}> ?navqa_mutant ."
                    + sparql[brace + 1:])
            return Mutant(qid, "template-break", text,
                          f"?{var} ({pos} of {p}) also subject of {q}")
        return None

    def mutants(self, gold: list[tuple[str, str]]) -> list[Mutant]:
        out = []
        for qid, sparql in gold:
            for op in (self.unmapped_swap, self.template_break):
                m = op(qid, sparql)
                if m is not None:
                    out.append(m)
        return out

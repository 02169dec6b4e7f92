"""Spatial constraints of a question: "within 3 km of X", "how far away", "how far apart".

A GeoSPARQL VKG gives its features a geometry (``geo:hasDefaultGeometry`` or
``geo:hasGeometry``) holding a WKT literal (``geo:asWKT``); the distance of two features is
``geof:distance(?a, ?b, uom:metre)``. These are the OGC standard's terms, not a VKG's, so
the rule carries over to any VKG whose mappings populate them.

:func:`parse_spatial` reads the constraint from the question's structure (the cue words
are :attr:`Phenomenon.SPATIAL_WITHIN` / :attr:`Phenomenon.SPATIAL_BEYOND` /
:attr:`Phenomenon.SPATIAL_DISTANCE` of :mod:`navqa.online.reading.lexicon`);
:func:`place_spatial` puts it on a :class:`~navqa.online.synthesis.plan.Plan`: the value the
distance is measured from ("… of **Fritzlar airfield**") gets a node of its own — it is
not joined to the answer by a property path, it is near it — and both nodes' geometries
are compared.

Example:
    >>> s = parse_spatial("Which places lie within 3 km of the airfield Fritzlar?")
    >>> (s.kind.name, s.metres, s.comparator, s.number_text)
    ('WITHIN', 3000.0, '<', '3')
    >>> parse_spatial("How far apart are Grainau and Hinterstein?").kind.name
    'BETWEEN'
    >>> parse_spatial("Which rivers are longer than 3 km?") is None
    True
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from navqa.model.iri import IRI, local_name
from navqa.online.context import SchemaContext
from navqa.online.reading.lexicon import Phenomenon, pattern
from navqa.online.synthesis.plan import Direction, OrderKey, Plan
from navqa.online.values import GroundedValue

__all__ = ["GEO", "SpatialConstraint", "SpatialKind", "geometry_property", "measured_from",
           "parse_spatial", "place_spatial", "project_distance"]

GEO = "http://www.opengis.net/ont/geosparql#"
GEOF_DISTANCE = "http://www.opengis.net/def/function/geosparql/distance"
UOM_METRE = "http://www.opengis.net/def/uom/OGC/1.0/metre"
_GEOMETRY_PROPS = (GEO + "hasDefaultGeometry", GEO + "hasGeometry")
_AS_WKT = GEO + "asWKT"

_UNITS = {"km": 1000.0, "kilometre": 1000.0, "kilometres": 1000.0, "kilometer": 1000.0,
          "kilometers": 1000.0, "m": 1.0, "metre": 1.0, "metres": 1.0, "meter": 1.0,
          "meters": 1.0, "mile": 1609.344, "miles": 1609.344}
_UNIT_RE = "|".join(sorted(_UNITS, key=len, reverse=True))
_NEAR = re.compile(
    rf"(?P<cue>{pattern(Phenomenon.SPATIAL_WITHIN)}|{pattern(Phenomenon.SPATIAL_BEYOND)})\s+"
    rf"(?P<n>\d+(?:[.,]\d+)?)\s*(?P<unit>{_UNIT_RE})\s+(?:of|from|to|around)\s+", re.I)
_FAR = re.compile(pattern(Phenomenon.SPATIAL_DISTANCE), re.I)
_BEYOND = re.compile(pattern(Phenomenon.SPATIAL_BEYOND), re.I)


class SpatialKind(Enum):
    """What the spatial part of a question asks."""

    WITHIN = "answers within (or beyond) a distance of a named feature"
    BETWEEN = "the distance between named features"


@dataclass(frozen=True, slots=True)
class SpatialConstraint:
    """A spatial constraint read from a question.

    Attributes:
        kind: Within a distance, or the distance between named features.
        metres: The distance bound in metres (``WITHIN`` only).
        comparator: ``<`` for "within"/"less than … from", ``>`` for "more than … from".
        number_text: The number as written ("3" of "3 km"): a bound, not a value to
            filter a data property by.
        anchor_start: Where the named feature's words begin in the question (values
            mentioned from there on are measured from, not joined to the answer).
        ask_distance: Whether the distance is asked for too ("… and how far away are
            they?").
    """

    kind: SpatialKind
    metres: float | None = None
    comparator: str = "<"
    number_text: str | None = None
    anchor_start: int = 0
    ask_distance: bool = False


def parse_spatial(question: str) -> SpatialConstraint | None:
    """The spatial constraint of ``question``, if it has one (see the module example)."""
    far = _FAR.search(question) is not None
    m = _NEAR.search(question)
    if m is not None:
        metres = float(m.group("n").replace(",", ".")) * _UNITS[m.group("unit").lower()]
        op = ">" if _BEYOND.fullmatch(m.group("cue")) else "<"
        return SpatialConstraint(SpatialKind.WITHIN, metres, op, m.group("n"), m.end(), far)
    if far:
        return SpatialConstraint(SpatialKind.BETWEEN, ask_distance=True)
    return None


def geometry_property(ctx: SchemaContext, cls: IRI) -> IRI | None:
    """The geometry property instances of ``cls`` have (the default geometry first)."""
    if not ctx.allowed(_AS_WKT):
        return None
    lineage = {cls, *ctx.ontology.superclasses(cls), *ctx.ontology.subclasses(cls)}
    return next((p for p in _GEOMETRY_PROPS if ctx.allowed(p) and any(
        e.source in lineage for e in ctx.graph.edges_of(p))), None)


def measured_from(question: str, spatial: SpatialConstraint,
                  groundings: Sequence[GroundedValue]) -> list[GroundedValue]:
    """The grounded values the distance is measured from.

    ``WITHIN``: those mentioned after the distance ("… within 3 km of **X**"); ``BETWEEN``:
    every one but the first (the first names the answer node itself).
    """
    if spatial.kind is SpatialKind.WITHIN:
        return [g for g in groundings
                if question.find(g.mention.text, spatial.anchor_start) >= 0]
    seen: list[str] = []
    out = []
    for g in groundings:
        if g.mention.text not in seen:
            seen.append(g.mention.text)
        if seen.index(g.mention.text) > 0:
            out.append(g)
    return out


def _wkt(ctx: SchemaContext, plan: Plan, var: str, cls: IRI, geom: IRI) -> str:
    wkt = plan.new_var(var[1:] + "Wkt")
    plan.var_class[wkt] = None
    plan.add(var, f"{ctx.compact(geom)}/{ctx.compact(_AS_WKT)}", wkt)
    plan.used |= {geom, _AS_WKT}
    return wkt


def place_spatial(ctx: SchemaContext, plan: Plan, spatial: SpatialConstraint, var: str,
                  cls: IRI, anchors: Sequence[GroundedValue]) -> str | None:
    """Put ``spatial`` on ``plan`` between the node ``var`` (of ``cls``) and ``anchors``.

    Each anchor mention gets a node of the first of its classes that has a geometry,
    pinned by its stored value. Returns the distance expression (for a projection), or
    ``None`` when the answer or no anchor has a geometry (the plan then says why).
    """
    geom = geometry_property(ctx, cls)
    if geom is None:
        plan.explain.append(f"spatial constraint: {ctx.compact(cls)} has no geometry")
        return None
    by_mention: dict[str, list[GroundedValue]] = {}
    for g in anchors:
        by_mention.setdefault(g.mention.text, []).append(g)
    target_wkt: str | None = None
    distance: str | None = None
    for text, options in by_mention.items():
        placed = next(((g, c, p) for g in options if ctx.allowed(g.prop) for c in g.classes
                       if (p := geometry_property(ctx, c)) is not None), None)
        if placed is None:
            plan.explain.append(f"spatial constraint: {text!r} has no geometry")
            continue
        g, a_cls, a_geom = placed
        a = plan.new_var(local_name(a_cls))
        plan.var_class[a] = a_cls
        plan.add(a, "a", ctx.compact(a_cls))
        plan.add(a, ctx.compact(g.prop), g.sparql())
        plan.used |= {a_cls, g.prop}
        target_wkt = target_wkt or _wkt(ctx, plan, var, cls, geom)
        a_wkt = _wkt(ctx, plan, a, a_cls, a_geom)
        distance = f"<{GEOF_DISTANCE}>({target_wkt}, {a_wkt}, <{UOM_METRE}>)"
        if spatial.kind is SpatialKind.WITHIN and spatial.metres is not None:
            plan.filters.append(f"{distance} {spatial.comparator} {spatial.metres:g}")
            plan.explain.append(f"within {spatial.metres:g} m of {text!r} "
                                f"({ctx.compact(a_cls)})")
        else:
            plan.explain.append(f"distance to {text!r} ({ctx.compact(a_cls)})")
    return distance


def project_distance(plan: Plan, spatial: SpatialConstraint, distance: str) -> None:
    """Answer the distance too: alone ("how far apart are A and B"), or as a further
    column of the answers near a feature, nearest first ("…, and how far away are they?")."""
    column = f"({distance} AS ?distance)"
    if spatial.kind is SpatialKind.BETWEEN:
        plan.select = [column]
        plan.distinct = False
        plan.order, plan.limit = [], None
        return
    if not spatial.ask_distance or plan.ask or plan.group_by or any(
            "COUNT(" in s for s in plan.select):
        return
    plan.select.append(column)
    if not plan.order:
        plan.order = [OrderKey("?distance", Direction.ASC)]

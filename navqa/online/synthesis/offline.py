"""The deterministic SPARQL synthesizer (the offline backend's "LLM writes the query").

It builds a small query graph from what earlier steps found, using only schema elements
the context allows (the active ontology), so it cannot produce an unmapped term:

1. the **target** is the chosen subgraph's root class (``?t a C``);
2. every **grounded value** becomes a constant on the node of its class, joined to the
   target by the cheapest path — subgraph edges first, then the rest of Ga — where an
   edge's cost falls with its relevance to the question;
3. numbers, years, dates and clock times become **FILTERs** on the best-matching data
   property of a node (a year prefers a property that records years; against a date
   property it becomes a date range); a property one hop away, on a reified fact, joins
   that fact, at the coarsest grain when several offer it; string
   patterns ("a name starting with 'Cec'") become ``STRSTARTS``/``STRENDS``/``CONTAINS``
   FILTERs on the target (:mod:`navqa.online.synthesis.strings`);
4. boolean data properties the question names become constants (``false`` after
   "not"/"no"/"without");
5. the **answer form** follows the question's structure
   (:func:`navqa.online.reading.question_shape.parse_shape`): "how many" → ``COUNT(DISTINCT ?t)``,
   per group ("… does each Y have") with ``GROUP BY`` the group's name (ordered by the
   count when asked); an ordering → ``ORDER BY`` on the property it names, ``LIMIT 1`` for
   a superlative, ``LIMIT n`` for "the top n", no limit for "sorted by …"/"from most to
   fewest"; "what is the highest …" → ``MAX``/``MIN``; "when"/"what is the X of" → that
   data property; yes/no → ``ASK``; values asked as alternatives ("A or B") → ``UNION``;
6. otherwise the target's **name** is projected (``SELECT DISTINCT ?name``), with the
   further columns the question asks for ("… and their depth"); the values it was
   filtered or ranked by stay in the query, not in the answer.

A constraint is never dropped silently: a value found nowhere is kept as written (on
the property where similar values live, else on the name), and a number no property
matches well goes on the best one of its type (the explanation says so).

The query graph and its rendering live in :mod:`navqa.online.synthesis.plan`; the cue words
in :mod:`navqa.online.reading.lexicon`.

Values are always escaped (:func:`navqa.model.terms.escape_string`); nothing from the
question is pasted into the query text unescaped.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from navqa.model.answers import EntityAnswer
from navqa.model.events import Mentions, ValueMention
from navqa.model.iri import IRI, OWL_THING, RDF_TYPE, XSD, local_name
from navqa.model.rules import GrammarRule
from navqa.online.context import (
    BOOLEAN,
    DATES,
    NUMERIC,
    TIMES,
    Neighbour,
    SchemaContext,
    normal,
)
from navqa.online.expansion import Subgraph
from navqa.online.linking import Linking
from navqa.online.reading.asked_columns import PLACE_WORDS, RANKED_QUANTITY
from navqa.online.reading.lexicon import (
    Phenomenon,
    aggregate_of,
    pattern,
    quantity_of,
    superlative_direction,
    words,
)
from navqa.online.reading.question_shape import (
    Ordering,
    QuestionShape,
    parse_shape,
)
from navqa.online.synthesis.columns import (
    attribute_phrase,
    column_score,
    columns_after_attribute,
    interval_sides,
    literal_kinds,
    names_class_only,
    word_overlap,
)
from navqa.online.synthesis.counting import bound_by_count, count_per_year, rank_by_count
from navqa.online.synthesis.negation import (
    before_negation,
    is_negated,
    negate_relation,
    negate_since,
)
from navqa.online.synthesis.plan import OrderKey, Plan, literal, render, year_range
from navqa.online.synthesis.relations import (
    place_record_column,
    place_relation_column,
    record_column,
    relation_column,
)
from navqa.online.synthesis.spatial import (
    geometry_property,
    measured_from,
    parse_spatial,
    place_spatial,
    project_distance,
)
from navqa.online.synthesis.strings import add_string_filters
from navqa.online.synthesis.validity import only_current
from navqa.online.values import GroundedValue, UnmatchedValue

__all__ = ["OfflineSynthesizer", "Plan", "literal", "render", "used_terms"]

STOP = words(Phenomenon.STOPWORD)
NEGATIONS = words(Phenomenon.NEGATION)
_ATTR_Q = re.compile(
    r"^\W*(?:what|which|where)\s+(?:is|are|was|were)\s+the\s+(?P<phrase>[\w\s\-]+?)\s+"
    r"(?:of|for|on|in|at)\b", re.I)
_COLUMN_LEXICAL = 0.4
"""Weight of the word overlap between a column phrase and an object property's names."""
_EDGE_COLUMN_MINIMUM = 0.45
"""Least score of an object property as the entity column a phrase names."""
_SIDE_BIAS = 0.4
"""How much less (more) an edge named for the side of an interval the words before a
value name (for the other side) costs on the value's path (grammar rule ``anchor-side``)."""
AFFINITY_MARGIN = 0.1
"""How much more (cosine) the question must speak of one tied neighbour's own properties
than of another's for ``fact-affinity`` to choose it (:meth:`OfflineSynthesizer._break_tie`)."""
_IN_WHAT_YEAR = re.compile(r"\b(?:in\s+)?(?:what|which)\s+year\b", re.I)
_HOW_MUCH = re.compile(r"^\W*how\s+(?:much|large|long|deep|big|high|old)\s+(?P<phrase>.+?)\W*$",
                       re.I)
_MONTH = re.compile(r"\b(?:" + "|".join(sorted(words(Phenomenon.MONTH))) + r")", re.I)
_ABSENT = re.compile(
    rf"(?:{pattern(Phenomenon.ABSENCE)})\s+(?:(?:{pattern(Phenomenon.ABSENCE_QUALIFIER)})\s+)?"
    r"(?P<phrase>[a-zà-ÿ][a-zà-ÿ\- ]{2,40}?)(?=\?|$|,|\s+(?:and|or|in|on)\b)", re.I)


class OfflineSynthesizer:
    """Deterministic question → SPARQL over a chosen subgraph."""

    method = "offline"

    def __init__(self, ctx: SchemaContext, *,
                 disabled: frozenset[GrammarRule] = frozenset(),
                 entity_answer: EntityAnswer = EntityAnswer.ENTITY) -> None:
        self.ctx = ctx
        self.disabled = disabled
        self.entity_answer = entity_answer
        """How entity answers are projected (configuration, like ``disabled``)."""
        """Rules switched off (an ablation, ``pipeline.disabled_rules``); configuration,
        not per-call state: the rules a query used are on its :class:`Plan`."""

    def _on(self, plan: Plan, rule: GrammarRule, applied: object = True) -> bool:
        """Whether ``rule`` is switched on; when ``applied`` is truthy too, the plan
        records that the rule shaped it."""
        if rule in self.disabled:
            return False
        if applied:
            plan.rules.add(rule)
        return True

    # -- helpers -------------------------------------------------------------------------

    def _sim(self, iri: IRI, vec: np.ndarray) -> float:
        v = self.ctx.vector(iri)
        return float(v @ vec) if v is not None else 0.0

    def _phrase_vec(self, text: str) -> np.ndarray | None:
        words = [w for w in re.findall(r"[a-zà-ÿ\-]+", text.lower()) if w not in STOP]
        if not words:
            return None
        return self.ctx.embed([" ".join(words)])[0]

    def _side_bias(self, plan: Plan, before: str) -> Callable[[IRI], float] | None:
        """"Which pipelines start at X?": when the words before a value name one side of
        an interval (start, from, since / end, to, until), an edge named for that side
        (``pipelineFromFacility``) costs less and one named for the other side more
        (grammar rule ``anchor-side``); ``None`` when they name no side or both."""
        sides = interval_sides(before)
        if len(sides) != 1 or not self._on(plan, GrammarRule.ANCHOR_SIDE, applied=False):
            return None
        (side,) = sides
        ctx = self.ctx

        def bias(prop: IRI) -> float:
            named = interval_sides(f"{local_name(prop)} {ctx.label(prop)}")
            if len(named) != 1:
                return 0.0
            return -_SIDE_BIAS if side in named else _SIDE_BIAS
        return bias

    def _edge_cost(self, prop: IRI, in_sub: bool, linking: Linking) -> float:
        s = linking.property_scores.get(prop, 0.0)
        cost = 1.0 + max(0.0, 0.6 - s)
        return cost * (0.85 if in_sub else 1.0)

    def _path(self, start: IRI, goals: set[IRI], sub: Subgraph, linking: Linking,
              max_len: int = 4, *, loose: bool = True,
              bias: Callable[[IRI], float] | None = None) -> list[Neighbour] | None:
        """Cheapest object-property path from ``start`` to a class of ``goals``.

        An edge costs less when its property is relevant to the question, when it is in
        the chosen subgraph, and when it leads through a class the question mentions.
        With ``loose``, ending on a superclass of a goal (an instance of it may be of the
        goal class; the constant pins it down) costs a little more than ending on the goal
        itself; without, only a goal or one of its subclasses ends a path.
        """
        ctx = self.ctx
        sub_edges = {e.triple for e in sub.edges}
        sub_props = {e.prop for e in sub.edges}
        exact = {g for goal in goals for g in ctx.ontology.subclasses(goal)}
        loose_ends = ({g for goal in goals for g in ctx.ontology.superclasses(goal)} - exact
                      - {OWL_THING}) if loose else set()
        heap: list[tuple[float, int, IRI, list[Neighbour]]] = [(0.0, 0, start, [])]
        best: dict[IRI, float] = {}
        found: tuple[float, list[Neighbour]] | None = None
        counter = 0
        while heap:
            cost, _, node, path = heapq.heappop(heap)
            if found is not None and cost >= found[0]:
                break
            if path and node in exact:
                return path
            if path and node in loose_ends and (found is None or cost + 0.5 < found[0]):
                found = (cost + 0.5, path)
            if best.get(node, 1e9) <= cost or len(path) >= max_len:
                continue
            best[node] = cost
            for n in ctx.neighbours(node, data=False):
                other = n.other
                if other == OWL_THING or not ctx.allowed(n.edge.prop):
                    continue
                in_sub = n.edge.triple in sub_edges or n.edge.prop in sub_props
                step = self._edge_cost(n.edge.prop, in_sub, linking)
                step += bias(n.edge.prop) if bias is not None else 0.0
                step -= 0.5 * max(0.0, linking.class_scores.get(other, 0.0) - 0.45)
                counter += 1
                heapq.heappush(heap, (cost + max(step, 0.3), counter, other, [*path, n]))
        return found[1] if found else None

    # -- main ----------------------------------------------------------------------------

    def __call__(self, question: str, mentions: Mentions, linking: Linking,
                 groundings: list[GroundedValue], sub: Subgraph, *,
                 ungrounded: Sequence[UnmatchedValue] = ()) -> tuple[str, Plan]:
        ctx = self.ctx
        # per question, so on the plan: one synthesizer serves concurrent questions
        plan = Plan(month_asked=bool(_MONTH.search(question)),
                    entity_answers=self.entity_answer is EntityAnswer.ENTITY)
        shape = parse_shape(question, mentions.cues)
        root = sub.root
        t = plan.new_var(local_name(root))
        plan.var_class[t] = root
        plan.add(t, "a", ctx.compact(root))
        plan.used.add(root)
        plan.explain.append(f"target {ctx.compact(root)} as {t}")
        node_vars: dict[IRI, str] = {root: t}

        # a feature the answers are near ("within 3 km of X") is no anchor to join
        spatial = parse_spatial(question) if GrammarRule.SPATIAL not in self.disabled else None
        far: list[GroundedValue] = []
        if spatial is not None and geometry_property(ctx, root) is not None:
            plan.rules.add(GrammarRule.SPATIAL)
            far = measured_from(question, spatial, groundings)
            groundings = [g for g in groundings if g not in far]
        else:
            spatial = None

        # 2. anchors: one grounding per mention, the best-connected one
        by_mention: dict[str, list[GroundedValue]] = {}
        for g in groundings:
            by_mention.setdefault(g.mention.text, []).append(g)
        negated_value = False
        placed: set[tuple[IRI, tuple[IRI, ...]]] = set()  # (property, classes) of the anchors
        if GrammarRule.SHARED_RECORD not in self.disabled and not shape.disjunction:
            held = self._shared_record(plan, question, by_mention, root, t, sub, linking)
            for text in held:
                plan.explain.append(f"value {text!r} held by one shared record")
                del by_mention[text]
        for text, options in by_mention.items():
            # "… but not in the brain": the value's join, on variables of its own, in MINUS
            negated = GrammarRule.NEGATED_VALUE not in self.disabled and is_negated(question, text)
            # "expressed both in the testis and in the gonad": a second value of the same
            # kind is a second join (one entity cannot be both), unless they are alternatives
            conjoined = not shape.disjunction and not negated and any(
                (g.prop, g.classes) in placed for g in options) and self._on(
                plan, GrammarRule.CONJOINED_VALUES)
            start = len(plan.triples)
            choice = self._attach_anchor(plan, options, root, t, sub, linking,
                                         {root: t} if negated or conjoined else node_vars,
                                         before=_words_before(question, text))
            if choice is not None:
                placed.add((choice.prop, choice.classes))
            if choice is not None and negated:
                negate_since(plan, start)
                negated_value = True
                plan.rules.add(GrammarRule.NEGATED_VALUE)
                plan.explain.append(f"value {text!r} negated: in MINUS")
            if choice is not None:
                plan.explain.append(f"value {text!r} → {ctx.compact(choice.prop)} "
                                    f"{choice.stored!r}")
        # a value found nowhere keeps its constraint, as written: where the nearest stored
        # values live (their property and class), else on the target's name
        for u in ungrounded:
            if u.kept:
                self._keep_ungrounded(plan, u, root, t, sub, linking, node_vars)
        # string patterns ("a name starting with 'Cec'"): FILTERs on the target
        if GrammarRule.STRING_PATTERN not in self.disabled:
            before = len(plan.filters)
            add_string_filters(ctx, plan, mentions, root, t, disjunction=shape.disjunction)
            self._on(plan, GrammarRule.STRING_PATTERN, len(plan.filters) > before)
        if shape.disjunction:
            disjoin(plan)
        distance = place_spatial(ctx, plan, spatial, t, root, far) if spatial else None

        # 4. booleans on the target, and values it must not have
        self._booleans(plan, question, mentions, linking, t, root)
        # (a negated value already says what the answers are not related to)
        negated_relation = not negated_value and \
            GrammarRule.NEGATED_RELATION not in self.disabled and \
            negate_relation(ctx, plan, question, t, root, self._phrase_vec)
        if negated_relation:
            plan.rules.add(GrammarRule.NEGATED_RELATION)
        else:
            self._missing_values(plan, question, t, root)

        # 3. numeric / date / time filters (the bound of "the top 5" is no value)
        o = shape.ordering
        bound = {o.bound_text, str(o.limit)} if o is not None and o.bound_text else set()
        bound |= {spatial.number_text} if spatial is not None and spatial.number_text else set()
        # "more than 60 different Y": a bound on a count per answer (HAVING), no value
        if shape.count_bound is not None and not shape.yes_no \
                and GrammarRule.COUNT_BOUND not in self.disabled and bound_by_count(
                ctx, plan, shape.count_bound, root, t,
                lambda start, goals: self._path(start, goals, sub, linking)) is not None:
            plan.rules.add(GrammarRule.COUNT_BOUND)
            bound |= {shape.count_bound.number_text, str(shape.count_bound.value)}
        for v in mentions.values:
            if v.kind != "string" and v.text not in bound:
                self._value_filter(plan, question, v)

        # 5. answer form
        plan = self._answer_form(plan, question, shape, linking, sub, root, t)
        if GrammarRule.PRESENT_TIME not in self.disabled:
            # "currently": intervals without an end date
            before = len(plan.filters)
            only_current(ctx, plan, question)
            self._on(plan, GrammarRule.PRESENT_TIME, len(plan.filters) > before)
        if spatial is not None and distance is not None:
            project_distance(plan, spatial, distance)
        return render(ctx.prefixes, plan), plan

    def _answer_form(self, plan: Plan, question: str, shape: QuestionShape, linking: Linking,
                     sub: Subgraph, root: IRI, t: str) -> Plan:
        """Projection, grouping and ordering of the plan, by the question's shape."""
        ctx = self.ctx
        if shape.yes_no:
            plan.ask = True
            return plan
        if plan.having:  # grouped by a bound on a count (synthesis.counting.bound_by_count)
            return plan
        # "Which X has the most Y?": ranked by a count of Y, when Y names a class
        if shape.count_rank is not None and GrammarRule.COUNT_RANK not in self.disabled \
                and rank_by_count(
                ctx, plan, shape.count_rank, root, t,
                lambda start, goals: self._path(start, goals, sub, linking)) is not None:
            plan.rules.add(GrammarRule.COUNT_RANK)
            return plan
        if shape.count and shape.per_year and GrammarRule.PER_YEAR not in self.disabled \
                and count_per_year(ctx, plan, question, t) is not None:
            plan.rules.add(GrammarRule.PER_YEAR)
            return plan
        if shape.count:
            count = f"(COUNT(DISTINCT {t}) AS ?count)"
            group = self._group(plan, shape.per_group, root, t, sub, linking) \
                if shape.per_group else None
            if group is not None:
                keys = plan.labelled(group)  # an entity per group: it and its label
                plan.select = [*keys, count]
                plan.group_by = keys
                if shape.ordering is not None and not shape.ordering.by_name:
                    # "from most to fewest", "the five most frequent": by the count
                    plan.order = [OrderKey("?count", shape.ordering.direction)]
                    plan.limit = shape.ordering.limit if shape.ordering.bound_text else None
            else:
                plan.select = [count]
            plan.distinct = False
            return plan
        if shape.ordering is not None:
            self._order(plan, question, shape.ordering, t)
        attr = self._asked_attribute(plan, question, linking)
        if attr is not None:
            asked = _ATTR_Q.match(question)
            self._more_columns(plan, columns_after_attribute(
                question, asked.group("phrase") if asked else None, shape.projections), t, root,
                sub, linking, optional=shape.optional_columns)
            return plan
        name_prop = ctx.name_property(root)
        head = plan.data_var(ctx, t, name_prop) if name_prop is not None else t
        # project the answer — the entity and its name (navqa.model.answers; the name alone
        # in NaVQA's convention), not the values it was filtered or ranked by — and the
        # further columns the question asks for ("… and their depth").
        plan.select = plan.entity(t, head)
        self._more_columns(plan, shape.projections, t, root, sub, linking,
                           optional=shape.optional_columns)
        return plan

    def _more_columns(self, plan: Plan, phrases: Sequence[str], t: str, root: IRI | None = None,
                      sub: Subgraph | None = None, linking: Linking | None = None, *,
                      optional: frozenset[str] = frozenset()) -> None:
        """Add a data property per phrase to the projection (of a plan node or one hop away);
        OPTIONAL only for a column whose value may be missing (``optional``: "… if any")."""
        ctx = self.ctx
        name_props = set(ctx.name_like_properties)
        kinds = frozenset(NUMERIC | DATES | TIMES | {XSD + "string", BOOLEAN})
        for phrase in phrases:
            if phrase == RANKED_QUANTITY:
                ranked = [k.var for k in plan.order] or [
                    v for (_, _), v in plan.data_vars.items() if v not in plan.select]
                if ranked and ranked[0] not in plan.select:
                    plan.select.append(ranked[0])
                    plan.explain.append(f"column: the ranked quantity {ranked[0]}")
                continue
            vec = self._phrase_vec(phrase)
            if vec is None:
                plan.unplaced_columns.append(phrase)
                continue
            def score(p: IRI, vec: np.ndarray = vec, phrase: str = phrase) -> float:
                return column_score(ctx, phrase, p, self._sim(p, vec), name_props)

            # on a node of the query only: a join added for a column would narrow the answer
            found = self._find_property(plan, vec, kinds, minimum=0.35, prefer=t, hop=False,
                                        score_fn=lambda _v, p: score(p))
            before = len(plan.triples)
            # "… hold a share in X, and how large is each share?": the column is on the
            # relation between the answer and X, which then joins them
            rel = relation_column(ctx, plan, t, kinds, score,
                                  lexical=linking.lexical if linking is not None else None) \
                if GrammarRule.RELATION_COLUMN not in self.disabled else None
            if rel is not None and rel.score >= 0.35 and (
                    found is None or rel.score > score(found[1]) + (0.05 if found[0] == t else 0)):
                x = place_relation_column(ctx, plan, rel)
                plan.rules.add(GrammarRule.RELATION_COLUMN)
                self._project(plan, x, phrase, optional, len(plan.triples) - 1)
                continue
            # "… the status of X, and since when?": the value and the column on a record
            rec = record_column(ctx, plan, kinds, score) \
                if self._on(plan, GrammarRule.RECORD_COLUMN, applied=False) else None
            if rec is not None and rec.score >= 0.35 and (
                    found is None or rec.score > score(found[1])):
                x = place_record_column(ctx, plan, rec)
                plan.rules.add(GrammarRule.RECORD_COLUMN)
                self._project(plan, x, phrase, optional, len(plan.triples) - 1)
                continue
            if found is None:
                # an entity column ("…, and with which rigs?"): the name of a joined class
                joined = self._group(plan, phrase, root, t, sub, linking, minimum=0.3) \
                    if root is not None and sub is not None and linking is not None else None
                if joined is None and self._on(plan, GrammarRule.COLUMN_FALLBACK, applied=False):
                    # "…, and where do they end?": an object property of the answer that
                    # the phrase names (``pipelineToFacility``) gives an entity column;
                    # else a value one join away
                    joined = self._edge_column(plan, phrase, vec, t)
                    if joined is None:
                        hopped = self._find_property(plan, vec, kinds, minimum=0.35, prefer=t,
                                                     score_fn=lambda _v, p: score(p))
                        joined = plan.data_var(ctx, *hopped) if hopped is not None else None
                    if joined is not None:
                        plan.rules.add(GrammarRule.COLUMN_FALLBACK)
                if joined is not None and joined not in plan.select:
                    self._project(plan, joined, phrase, optional, before)
                    plan.explain.append(f"column {phrase!r} → {joined}")
                elif joined is None:
                    plan.explain.append(f"no property for the asked column {phrase!r}")
                    plan.unplaced_columns.append(phrase)
                continue
            entity = self._class_column(plan, phrase, vec, t, found[1]) \
                if self._on(plan, GrammarRule.CLASS_COLUMN, applied=False) else None
            if entity is not None:
                # "…, together with the field they belong to": the linked entity, not the
                # value that matched only through the class's name (``dateIncludedInField``)
                plan.rules.add(GrammarRule.CLASS_COLUMN)
                self._project(plan, entity, phrase, optional, before)
                continue
            x = plan.data_var(ctx, *found)
            if x not in plan.select:
                maybe = self._project(plan, x, phrase, optional, before)
                plan.explain.append(f"column {phrase!r} → {ctx.compact(found[1])}"
                                    + (" (optional)" if maybe else ""))

    def _project(self, plan: Plan, x: str, phrase: str, optional: frozenset[str],
                 since: int) -> bool:
        """Project ``x`` as the column ``phrase`` asks for (once), OPTIONAL from the
        triple ``since`` on when the question says it may be missing; whether it is."""
        if x in plan.select:
            return False
        plan.select.append(x)
        maybe = self._column_optional(plan, phrase, optional)
        if maybe:
            _optional_since(plan, since)
        return maybe

    def _edge_column(self, plan: Plan, phrase: str, vec: np.ndarray, t: str) -> str | None:
        """The name of the entity that an object property of ``t``'s class links it to,
        when the column phrase names that property ("where do they end" →
        ``pipelineToFacility``): embedding similarity plus word overlap with the property's
        name and label and the linked class's label, at least ``_EDGE_COLUMN_MINIMUM``."""
        ctx = self.ctx
        cls = plan.var_class.get(t)
        if cls is None:
            return None
        # the words that name the place ("where") any linked entity is: not to be matched
        wording = " ".join(w for w in phrase.split() if w not in PLACE_WORDS) or phrase
        best: tuple[float, Neighbour] | None = None
        for n in ctx.neighbours(cls, data=False):
            if n.other == OWL_THING or not ctx.allowed(n.edge.prop) or not ctx.allowed(n.other):
                continue
            names = f"{local_name(n.edge.prop)} {ctx.label(n.edge.prop)} {ctx.label(n.other)}"
            sc = self._sim(n.edge.prop, vec) + _COLUMN_LEXICAL * word_overlap(wording, names)
            if best is None or sc > best[0]:
                best = (sc, n)
        if best is None or best[0] < _EDGE_COLUMN_MINIMUM:
            return None
        return self._join_column(plan, phrase, t, best[1])

    def _class_column(self, plan: Plan, phrase: str, vec: np.ndarray, t: str,
                      found: IRI) -> str | None:
        """The name of the entity of a class linked to ``t``'s by an object property, when
        the column phrase names that class and the data property ``found`` for it matches
        the phrase only through the class's name (``names_class_only``); of several such
        links, the one whose property the phrase is most like."""
        ctx = self.ctx
        cls = plan.var_class.get(t)
        if cls is None:
            return None
        found_names = f"{local_name(found)} {ctx.label(found)}"
        best: tuple[float, Neighbour] | None = None
        for n in ctx.neighbours(cls, data=False):
            if n.other in (OWL_THING, cls) or not ctx.allowed(n.edge.prop) \
                    or not ctx.allowed(n.other) \
                    or not names_class_only(phrase, ctx.label(n.other), found_names):
                continue
            names = f"{local_name(n.edge.prop)} {ctx.label(n.edge.prop)}"
            sc = self._sim(n.edge.prop, vec) + _COLUMN_LEXICAL * word_overlap(phrase, names)
            if best is None or sc > best[0]:
                best = (sc, n)
        return self._join_column(plan, phrase, t, best[1]) if best is not None else None

    def _join_column(self, plan: Plan, phrase: str, t: str, n: Neighbour) -> str:
        """Join the entity ``n`` links ``t`` to (or reuse the join the query has) and
        return the variable of its name (of the entity itself when it has none)."""
        ctx = self.ctx
        prop = ctx.compact(n.edge.prop)
        # a node a value pins down is no column: its name would restate the value
        pinned = {s_ for s_, _, o in plan.triples if o.startswith('"')}
        existing = next((o if n.direction == "out" else s_ for s_, p_, o in plan.triples
                         if p_ == prop and (s_ if n.direction == "out" else o) == t
                         and (o if n.direction == "out" else s_) not in pinned), None)
        var = existing or plan.new_var(local_name(n.other))
        if existing is None:
            plan.var_class[var] = n.other
            plan.used.add(n.edge.prop)
            if n.direction == "out":
                plan.add(t, prop, var)
            else:
                plan.add(var, prop, t)
        name_prop = ctx.name_property(n.other)
        plan.explain.append(f"column {phrase!r} through {prop}")
        return plan.data_var(ctx, var, name_prop) if name_prop is not None else var

    def _column_optional(self, plan: Plan, phrase: str, optional: frozenset[str]) -> bool:
        """Whether a further column goes in OPTIONAL: when the question says its value may
        be missing, or always when :attr:`GrammarRule.REQUIRED_COLUMN` is off."""
        if phrase in optional:
            return True
        return not self._on(plan, GrammarRule.REQUIRED_COLUMN)

    def _group(self, plan: Plan, phrase: str | None, root: IRI, t: str, sub: Subgraph,
               linking: Linking, *, minimum: float = 0.35) -> str | None:
        """The name variable of the class ``phrase`` names, joined to ``t``: the group of a
        per-group count ("… per Y"), or an entity column ("…, and with which Y?")."""
        ctx = self.ctx
        words_ = [w for w in re.findall(r"[a-zà-ÿ\-]+", (phrase or "").lower()) if w not in STOP]
        prefixes = [" ".join(words_[:i]) for i in range(1, len(words_) + 1)]
        if not prefixes:
            return None
        best: tuple[float, IRI] | None = None
        for vec in ctx.embed(prefixes):
            for iri, sc in ctx.class_scores(vec[None, :]).items():
                if iri != root and ctx.allowed(iri) and (best is None or sc > best[0]):
                    best = (sc, iri)
        if best is None or best[0] < minimum:
            plan.explain.append(f"no class for {phrase!r}")
            return None
        cls = best[1]
        path = self._path(root, {cls}, sub, linking)
        if path is None:
            plan.explain.append(f"{ctx.compact(cls)} not reachable from {ctx.compact(root)}")
            return None
        var = t
        for n in path:
            new = plan.new_var(local_name(n.other))
            plan.var_class[new] = n.other
            plan.used.add(n.edge.prop)
            if n.direction == "out":
                plan.add(var, ctx.compact(n.edge.prop), new)
            else:
                plan.add(new, ctx.compact(n.edge.prop), var)
            var = new
        name_prop = ctx.name_property(path[-1].other)
        head = plan.data_var(ctx, var, name_prop) if name_prop is not None else var
        plan.explain.append(f"joined {ctx.compact(cls)} for {phrase!r}")
        return head

    def _keep_ungrounded(self, plan: Plan, u: UnmatchedValue, root: IRI, t: str,
                         sub: Subgraph, linking: Linking, node_vars: dict[IRI, str]) -> None:
        ctx = self.ctx
        text = u.mention.text
        options = [GroundedValue(u.mention, n.prop, text, n.subject, n.classes, False)
                   for n in u.nearest]
        choice = self._attach_anchor(plan, options, root, t, sub, linking, node_vars) \
            if options else None
        if choice is None:
            name_prop = ctx.name_property(root)
            if name_prop is None:
                # no name to compare with: the value must still constrain the target
                plan.filters.append(f"CONTAINS(STR({t}), {literal(text)})")
                plan.explain.append(f"value {text!r} not found in the data: kept on the "
                                    f"IRI of {ctx.compact(root)}")
                return
            plan.add(t, ctx.compact(name_prop), literal(text))
            plan.used.add(name_prop)
            prop = name_prop
        else:
            prop = choice.prop
        plan.explain.append(f"value {text!r} not found in the data: kept as written on "
                            f"{ctx.compact(prop)}")

    def _attach_anchor(self, plan: Plan, options: list[GroundedValue], root: IRI, t: str,
                       sub: Subgraph, linking: Linking, node_vars: dict[IRI, str], *,
                       before: str = "") -> GroundedValue | None:
        """Attach the best-connected of a value's groundings to the answer ``t``, by the
        cheapest path; ``before``: the words just before the value in the question."""
        ctx = self.ctx
        bias = self._side_bias(plan, before)
        same = [g for g in options if any(ctx.same_lineage(root, c) for c in g.classes)
                and ctx.allowed(g.prop)]
        if same:
            g = same[0]
            plan.add(t, ctx.compact(g.prop), g.sparql())
            plan.used.add(g.prop)
            return g
        best: tuple[float, GroundedValue, list[Neighbour]] | None = None
        for g in options:
            if not g.classes or not ctx.allowed(g.prop):
                continue
            path = self._path(root, set(g.classes), sub, linking, loose=not g.code, bias=bias)
            if path is None:
                continue
            cost = sum(self._edge_cost(n.edge.prop, False, linking) + (bias(n.edge.prop)
                       if bias is not None else 0.0) for n in path)
            cost -= 0.3 * max((linking.class_scores.get(c, 0.0) for c in g.classes), default=0)
            if best is None or cost < best[0]:
                best = (cost, g, path)
        if best is None:
            return None
        _, g, path = best
        if bias is not None and any(bias(n.edge.prop) for n in path):
            plan.rules.add(GrammarRule.ANCHOR_SIDE)
        var = t
        cls = root
        for n in path:
            nxt = n.other
            key = nxt
            existing = node_vars.get(key)
            new = existing if existing is not None and nxt != cls else plan.new_var(
                local_name(nxt))
            plan.var_class.setdefault(new, nxt)
            prop = ctx.compact(n.edge.prop)
            plan.used.add(n.edge.prop)
            if n.direction == "out":
                plan.add(var, prop, new)
            else:
                plan.add(new, prop, var)
            node_vars.setdefault(nxt, new)
            var, cls = new, nxt
        plan.add(var, ctx.compact(g.prop), g.sparql())
        plan.used.add(g.prop)
        return g

    def _shared_record(self, plan: Plan, question: str,
                       by_mention: dict[str, list[GroundedValue]], root: IRI, t: str,
                       sub: Subgraph, linking: Linking) -> list[str]:
        """Join values of different classes that the answer reaches by one property
        through one record that the property also reaches (the rule ``shared-record``);
        returns the mentions so placed (none, or all of a group of two or more)."""
        ctx = self.ctx
        firsts: dict[str, tuple[GroundedValue, IRI]] = {}
        for text, options in by_mention.items():
            g = options[0]
            if len(options) > 1 or not g.classes or g.code or is_negated(question, text) \
                    or any(ctx.same_lineage(root, c) for c in g.classes):
                continue
            path = self._path(root, set(g.classes), sub, linking, loose=False)
            if path is not None and len(path) == 1 and path[0].direction == "out":
                firsts[text] = (g, path[0].edge.prop)
        by_prop: dict[IRI, list[str]] = {}
        for text, (_, prop) in firsts.items():
            by_prop.setdefault(prop, []).append(text)
        for prop, texts in by_prop.items():
            kinds = [set(firsts[x][0].classes) for x in texts]
            if len(texts) < 2 or any(a & b for i, a in enumerate(kinds) for b in kinds[i + 1:]):
                continue
            for n in ctx.neighbours(root, data=False):
                rec = n.other
                if n.direction != "out" or n.edge.prop != prop or rec in set().union(*kinds):
                    continue
                links: list[IRI] = []
                for x in texts:
                    goal = {c for k in firsts[x][0].classes for c in ctx.ontology.subclasses(k)}
                    edge = next((m.edge.prop for m in ctx.neighbours(rec, data=False)
                                 if m.direction == "out" and m.other in goal), None)
                    if edge is None:
                        break
                    links.append(edge)
                if len(links) != len(texts):
                    continue
                r = plan.new_var(local_name(rec))
                plan.var_class[r] = rec
                plan.add(t, ctx.compact(prop), r)
                plan.used.update({prop, *links})
                for x, edge in zip(texts, links, strict=True):
                    g = firsts[x][0]
                    v = plan.new_var(local_name(g.classes[0]))
                    plan.var_class[v] = g.classes[0]
                    plan.add(r, ctx.compact(edge), v)
                    plan.add(v, ctx.compact(g.prop), g.sparql())
                    plan.used.add(g.prop)
                plan.rules.add(GrammarRule.SHARED_RECORD)
                return texts
        return []

    def _booleans(self, plan: Plan, question: str, mentions: Mentions, linking: Linking,
                  var: str, cls: IRI) -> None:
        """Boolean properties the question names: by label words, else by similarity."""
        from navqa.model.iri import humanize
        from navqa.online.linking import normal

        ctx = self.ctx
        q_norm = f" {normal(question)} "
        q_low = question.lower()
        texts = linking.texts
        vecs = linking.mention_vectors[: len(texts)]
        for e in ctx.data_properties_of(cls):
            if ctx.datatype(e.prop, cls) != BOOLEAN or not ctx.allowed(e.prop):
                continue
            phrase = None
            for name in (ctx.label(e.prop), humanize(e.prop)):
                n = normal(name)
                if n and f" {n} " in q_norm:
                    phrase = name.lower()
                    break
            if phrase is None and texts:
                v = ctx.vector(e.prop)
                if v is None:
                    continue
                sims = vecs @ v
                i = int(np.argmax(sims))
                if sims[i] < 0.62:
                    continue
                phrase = texts[i]
            if phrase is None:
                continue
            first = phrase.split()[0]
            pos = q_low.find(first)
            before = q_low[max(0, pos - 25):pos].split() if pos >= 0 else []
            value = "false" if any(w in NEGATIONS for w in before[-3:]) else "true"
            plan.add(var, ctx.compact(e.prop), value)
            plan.used.add(e.prop)
            plan.explain.append(f"boolean {ctx.compact(e.prop)} = {value} (from {phrase!r})")

    def _missing_values(self, plan: Plan, question: str, var: str, cls: IRI) -> None:
        """"no (known/recorded) X", "without X" on a non-boolean data property of the target.

        Rendered as ``OPTIONAL { ?t p ?x } FILTER(!BOUND(?x))``: Ontop 5.1.2 rejects
        ``FILTER NOT EXISTS``.
        """
        ctx = self.ctx
        m = _ABSENT.search(question)
        if not m:
            return
        vec = self._phrase_vec(m.group("phrase"))
        if vec is None:
            return
        props = [e.prop for e in ctx.data_properties_of(cls) if ctx.allowed(e.prop)]
        if not props:
            return
        best = max(props, key=lambda p: self._sim(p, vec))
        if self._sim(best, vec) < 0.45 or ctx.datatype(best, cls) == BOOLEAN:
            return
        x = plan.new_var(local_name(best))
        plan.var_class[x] = None
        plan.optionals.append([(var, ctx.compact(best), x)])
        plan.filters.append(f"!BOUND({x})")
        plan.used.add(best)
        plan.explain.append(f"missing value: no {ctx.compact(best)}")

    def _find_property(self, plan: Plan, vec: np.ndarray, kinds: frozenset[IRI], *,
                       minimum: float, prefer: str | None = None,
                       score_fn: Any = None, hop: bool = True,
                       about: str | None = None) -> tuple[str, IRI] | None:
        """The data property best matching ``vec`` on a plan node, or one hop away.

        NPD and similar VKGs reify facts (a field's yearly production, its reserves, its
        operator history): "how much oil did Statfjord produce" needs ``producedOil`` of
        the ``FieldYearlyProduction`` next to the field. A property of a neighbouring
        class competes with a small penalty; when it wins, the join is added. When several
        neighbours offer it equally well, :meth:`_break_tie` chooses, by ``about`` (the
        question) among others.
        """
        ctx = self.ctx
        best: tuple[float, str, IRI, Neighbour | None] | None = None
        for var, prop in self._candidate_props(plan, kinds):
            sc = score_fn(var, prop) if score_fn else self._sim(prop, vec)
            sc += 0.05 if var == prefer else 0.0
            if best is None or sc > best[0]:
                best = (sc, var, prop, None)
        hops: list[tuple[float, str, IRI, Neighbour]] = []
        for var, cls in list(plan.var_class.items()) if hop else ():
            if cls is None:
                continue
            for n in ctx.neighbours(cls, data=False):
                other = n.other
                if other == OWL_THING or not ctx.allowed(n.edge.prop):
                    continue
                finer = self._finer_than_asked(other, plan)
                for e in ctx.data_properties_of(other):
                    if not ctx.allowed(e.prop) or ctx.datatype(e.prop, other) not in kinds:
                        continue
                    sc = (score_fn(var, e.prop) if score_fn else self._sim(e.prop, vec)) - 0.08
                    sc -= 0.05 if finer else 0.0
                    hops.append((sc, var, e.prop, n))
                    if best is None or sc > best[0]:
                        best = (sc, var, e.prop, n)
        if best is None or best[0] < minimum:
            return None
        top, var, prop, via = best
        if via is None:
            return var, prop
        tied = [n for sc, v, p, n in hops if v == var and p == prop and sc >= top - 1e-9]
        if len(tied) > 1:
            via = self._break_tie(plan, via, tied, plan.var_class[var] or OWL_THING, prop, about)
        other = via.other
        existing = next((v for v, c in plan.var_class.items() if c == other), None)
        new = existing or plan.new_var(local_name(other))
        if existing is None:
            plan.var_class[new] = other
            plan.add(new, "a", ctx.compact(other))
            plan.used.add(other)
            if via.direction == "out":
                plan.add(var, ctx.compact(via.edge.prop), new)
            else:
                plan.add(new, ctx.compact(via.edge.prop), var)
            plan.used.add(via.edge.prop)
            plan.explain.append(f"joined {ctx.compact(other)} for {ctx.compact(prop)}")
        return new, prop

    def _break_tie(self, plan: Plan, first: Neighbour, tied: list[Neighbour], src: IRI,
                   prop: IRI, about: str | None) -> Neighbour:
        """The neighbour class that gets a property several of them offer equally well.

        Different facts that share the property (a year on the yearly production and on
        the yearly investment): the one whose own data properties — those the others do
        not have — the question (``about``) speaks of clearly most (by more than
        :data:`AFFINITY_MARGIN`; ``fact-affinity``): "how much oil did X produce in 1990"
        puts the year on the production, which records the oil. Otherwise the same fact at
        several grains (a field's reserves, and per company): the grain about fewer things
        the question does not name (``coarsest-fact``, :meth:`_dimensions_not_asked`).
        """
        ctx = self.ctx
        grain = first
        if GrammarRule.COARSEST_FACT not in self.disabled:
            dims = {id(n): self._dimensions_not_asked(n.other, src, plan) for n in tied}
            fewest = min(dims.values())
            if dims[id(first)] > fewest:
                grain = next(n for n in tied if dims[id(n)] == fewest)
                plan.rules.add(GrammarRule.COARSEST_FACT)
        vec = self._phrase_vec(about) if about and \
            GrammarRule.FACT_AFFINITY not in self.disabled else None  # only on a tie
        if vec is None:
            return grain
        own = {id(n): {e.prop for e in ctx.data_properties_of(n.other) if ctx.allowed(e.prop)}
               for n in tied}
        shared = set.intersection(*own.values())
        affinity = sorted(((max((self._sim(p, vec) for p in own[id(n)] - shared), default=0.0), i)
                           for i, n in enumerate(tied)), reverse=True)
        (top, i), (second, _) = affinity[0], affinity[1]
        best = tied[i]
        if top - second <= AFFINITY_MARGIN or best is grain:
            return grain
        plan.rules.add(GrammarRule.FACT_AFFINITY)
        plan.explain.append(f"{ctx.compact(prop)} on {ctx.compact(best.other)}: the question "
                            "speaks of its other properties")
        return best

    def _dimensions_not_asked(self, cls: IRI, via: IRI, plan: Plan) -> int:
        """How many further things, beside ``via``, the facts of ``cls`` are about that the
        question does not name: object properties of ``cls`` to classes not in the plan.

        The same figure is often recorded at two grains next to one node (a field's
        reserves as a whole and per company, NPD's ``FieldReserve`` and ``CompanyReserve``);
        a question that names no company wants the whole, so when both offer the asked
        property equally well, the grain about fewer such things wins. When the question
        names the other thing, it is in the plan and counts for nothing.
        """
        asked = {c for c in plan.var_class.values() if c is not None}
        others = {n.edge.prop for n in self.ctx.neighbours(cls, data=False)
                  if n.direction == "out" and n.other != via and n.other not in asked
                  and self.ctx.allowed(n.edge.prop)}
        return len(others)

    def _finer_than_asked(self, cls: IRI, plan: Plan) -> bool:
        """Whether ``cls`` records per month while the question names no month.

        Yearly and monthly figures often sit side by side (NPD's field production); a
        question about "1990" wants the yearly ones.
        """
        if plan.month_asked:
            return False
        return any("month" in local_name(e.prop).lower() for e in
                   self.ctx.data_properties_of(cls))

    def _candidate_props(self, plan: Plan, kinds: frozenset[IRI]) -> list[tuple[str, IRI]]:
        out = []
        for var, cls in plan.var_class.items():
            if cls is None:
                continue
            for e in self.ctx.data_properties_of(cls):
                if self.ctx.allowed(e.prop) and self.ctx.datatype(e.prop, cls) in kinds:
                    out.append((var, e.prop))
        return out

    def _value_filter(self, plan: Plan, question: str, v: ValueMention) -> None:
        ctx = self.ctx
        kinds = {"time": TIMES, "date": DATES, "year": DATES | NUMERIC,
                 "number": NUMERIC}.get(v.kind, NUMERIC)
        said = v.written or v.text
        pos = question.find(said) if v.kind not in ("time",) else -1
        if pos < 0:
            digits = re.search(r"\d", question)
            pos = digits.start() if digits else 0
        # the words around the value; those in the scope of a negation that follows
        # ("… made in 2010 that have not been included in …") say what the answers are not
        window = question[max(0, pos - 40): pos] + " " + before_negation(
            question[pos + len(said): pos + len(said) + 40])
        vec = self._phrase_vec(window)
        if vec is None:
            vec = self._phrase_vec(question)
        assert vec is not None

        year_kind = GrammarRule.YEAR_PROPERTY not in self.disabled

        def score(var: str, prop: IRI) -> float:
            s = self._sim(prop, vec)
            name = local_name(prop).lower()
            dt = ctx.datatype(prop)
            if v.kind == "year":
                # a property that records years is the value's own kind; a date has to be
                # cut to its year (and a VKG's bookkeeping dates are dates too)
                s += 0.35 if (year_kind and _records_years(prop, dt)) else \
                    0.25 if ("year" in name or dt in DATES) else -0.2
            if v.kind == "number" and "year" in name:
                s -= 0.3
            return s

        found = self._find_property(plan, vec, frozenset(kinds), minimum=0.2,
                                    prefer=next(iter(plan.var_class)), score_fn=score,
                                    about=question)
        if found is None:
            # never drop the constraint: without it the query answers a broader question
            found = self._find_property(plan, vec, frozenset(kinds), minimum=-10.0,
                                        prefer=next(iter(plan.var_class)), score_fn=score,
                                        about=question)
            if found is None:
                plan.explain.append(f"no property of a {v.kind} for the value {v.text!r}: "
                                    "the constraint is not placed")
                return
            plan.explain.append(f"value {v.text!r}: no clearly matching property, "
                                "kept on the best one")
        var, prop = found
        dt = ctx.datatype(prop, plan.var_class.get(var))
        self._on(plan, GrammarRule.YEAR_PROPERTY, year_kind and v.kind == "year"
                 and _records_years(prop, ctx.datatype(prop)))
        x = plan.data_var(ctx, var, prop)
        op = v.comparator
        if v.kind == "time":
            cmp_op = "=" if op == "decade" else op
            plan.filters.append(f"STR({x}) {cmp_op} {literal(v.text)}")
        elif dt in DATES and v.kind in ("year", "number"):
            plan.filters += year_range(x, int(float(v.text)), op)
        elif dt in DATES:
            plan.filters.append(f"{x} {'=' if op == 'decade' else op} "
                                f"{literal(v.text, XSD + 'date')}")
        else:
            num = v.text
            if op == "decade":
                plan.filters.append(f"{x} >= {num} && {x} < {int(num) + 10}")
            else:
                plan.filters.append(f"{x} {op} {num}")
        plan.explain.append(f"filter {ctx.compact(prop)} {op} {v.text}")

    def _order(self, plan: Plan, question: str, ordering: Ordering, var: str) -> str | None:
        """ORDER BY the quantity the ordering names (LIMIT its bound, when it has one)."""
        low = question.lower()
        word = ordering.phrase
        name_prop = self.ctx.name_property(plan.var_class.get(var) or "") if ordering.by_name \
            else None
        if name_prop is not None:
            x = plan.data_var(self.ctx, var, name_prop)
            plan.order = [OrderKey(x, ordering.direction)]
            plan.limit = ordering.limit
            plan.explain.append(f"order by name ({ordering.limit or 'no'} limit)")
            return x
        if word and superlative_direction(word) is not None:
            # a superlative word: the quantity is named around it ("the longest line")
            head, _, tail = low.partition(word) if word in low else ("", "", low)
            after = tail.split()[:4]
            if quantity_of(word) and self._ranks_the_answer(plan, var, after):
                after = []  # "the deepest well Lundin drilled": depth, not a well's name
            text = " ".join(head.split()[-3:] + after) + " " + quantity_of(word)
        else:
            text = word or low
        vec = self._phrase_vec(text)
        if vec is None:
            return None
        kinds = NUMERIC | DATES | TIMES
        if ordering.limit is None:
            kinds = kinds | {XSD + "string"}
        found = self._find_property(plan, vec, frozenset(kinds), minimum=0.2, prefer=var)
        if found is None:
            plan.explain.append(f"no property to order by for {word or question!r}")
            return None
        v, prop = found
        x = plan.data_var(self.ctx, v, prop)
        plan.order = [OrderKey(x, ordering.direction)]
        plan.limit = ordering.limit
        bound = f"limit {ordering.limit}" if ordering.limit is not None else "no limit"
        plan.explain.append(f"order by {self.ctx.compact(prop)} "
                            f"{ordering.direction.value} ({bound})")
        return x

    def _ranks_the_answer(self, plan: Plan, var: str, after: list[str]) -> bool:
        """Whether the noun after a superlative with a dimension of its own ("deepest":
        depth) names the answer's class ("the deepest exploration **well**"): then it is
        what is ranked, and its words (a well's name, its purpose) would only pull the
        ordering to a property about wells instead of the dimension (grammar rule
        ``ranked-noun``)."""
        cls = plan.var_class.get(var)
        label = normal(self.ctx.label(cls)).split() if cls else []
        hit = bool(label) and label[-1] in normal(" ".join(after[:3])).split()
        return hit and self._on(plan, GrammarRule.RANKED_NOUN, hit)

    def _names_target(self, plan: Plan, phrase: str) -> bool:
        """Whether the head noun of an attribute phrase names the target's class ("the
        first **station**" on ``Station``): the question asks for the entity, not for one
        of its values (grammar rule ``entity-phrase``)."""
        cls = plan.var_class[next(iter(plan.var_class))] if plan.var_class else None
        words = normal(phrase).split()
        label = normal(self.ctx.label(cls)).split() if cls else []
        hit = bool(words and label and words[-1] == label[-1])
        return hit and self._on(plan, GrammarRule.ENTITY_PHRASE, hit)

    def _asked_attribute(self, plan: Plan, question: str, linking: Linking) -> str | None:
        """Project a data property the question asks for ("when …", "what is the X of …",
        "how much X …", "in which year …") — on a plan node or one hop away."""
        ctx = self.ctx
        cues_when = re.match(r"^\W*when\b", question, re.I) is not None
        m = _ATTR_Q.match(question)
        how_much = _HOW_MUCH.match(question)
        year = _IN_WHAT_YEAR.search(question) is not None
        if not (cues_when or m or year or how_much):
            return None
        phrase = m.group("phrase") if m else how_much.group("phrase") if how_much else question
        if m:  # "the depth and age of X": its first column; "the name and status": no attribute
            first = attribute_phrase(question, phrase)
            if first is None:
                return None
            phrase = first
            if self._names_target(plan, phrase):
                return None  # "what is the first station of service X": a station
        # the first aggregate word governs: "the average total depth" is an average
        agg = next((a for a in map(aggregate_of, phrase.lower().split()) if a is not None),
                   None) if (m or how_much) else None
        if cues_when:
            kinds = frozenset(DATES | TIMES | NUMERIC)
        elif year:
            kinds = frozenset(DATES | NUMERIC)
        else:  # "what is the X of …": a literal of any datatype (a geometry, a page)
            kinds = frozenset(NUMERIC | DATES | TIMES | {XSD + "string", BOOLEAN}) | (
                literal_kinds(ctx) if m else frozenset())
        vec = self._phrase_vec(phrase if (m or how_much) else question)
        if vec is None:
            return None
        name_props = set(ctx.name_like_properties)

        def score(var: str, prop: IRI) -> float:
            s = column_score(ctx, phrase if (m or how_much) else "", prop, self._sim(prop, vec),
                             name_props)
            if s == -1.0:
                return s
            dt = ctx.datatype(prop)
            if cues_when and dt in DATES | TIMES:
                s += 0.15
            if year and ("year" in local_name(prop).lower() or dt in DATES):
                s += 0.25
            return s

        found = self._find_property(plan, vec, kinds, minimum=0.35 if m else 0.2,
                                    prefer=next(iter(plan.var_class)), score_fn=score)
        if found is None:
            return None
        var, prop = found
        x = plan.data_var(ctx, var, prop)
        if year and ctx.datatype(prop) in DATES:
            plan.select = [f"(YEAR({x}) AS ?year)"]
            plan.distinct = False
        elif agg is not None:
            plan.select = [f"({agg}({x}) AS ?{agg.lower()})"]
            plan.distinct = False
        else:
            plan.select = [x]
        plan.explain.append(f"asked attribute {ctx.compact(prop)}")
        return x


def _records_years(prop: IRI, datatype: IRI | None) -> bool:
    """Whether a data property records years: a number named for a year
    (``wellboreEntryYear``), not a date."""
    return datatype in NUMERIC and "year" in local_name(prop).lower()


def _words_before(question: str, text: str, n: int = 3) -> str:
    """The ``n`` words just before the first mention of ``text`` in the question.

    Example:
        >>> _words_before("Which pipelines start at the Alpha platform?", "Alpha")
        'start at the'
    """
    pos = question.lower().find(text.lower())
    return " ".join(question[:pos].split()[-n:]) if pos > 0 else ""


def _optional_since(plan: Plan, start: int) -> None:
    """Move the triples added since ``start`` into one OPTIONAL block: a further answer
    column must not narrow the answers (an entity without that value still answers)."""
    added = plan.triples[start:]
    if added:
        del plan.triples[start:]
        plan.optionals.append(added)


def disjoin(plan: Plan) -> None:
    """Constants of one property on one node, asked as alternatives ("A or B"): a UNION.

    A constant is a literal or an IRI (a constant object of the mappings, "registered in
    Denmark or Liberia").

    Example:
        >>> p = Plan(triples=[("?s", "ex:name", '"A"'), ("?s", "ex:name", '"B"')])
        >>> disjoin(p); p.triples, len(p.unions[0])
        ([], 2)
    """
    groups: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
    for tr in plan.triples:
        if tr[1] != "a" and tr[2].startswith(('"', "<")):
            groups.setdefault((tr[0], tr[1]), []).append(tr)
    for alts in groups.values():
        if len(alts) < 2:
            continue
        plan.triples = [tr for tr in plan.triples if tr not in alts]
        plan.unions.append([[tr] for tr in alts])
        plan.explain.append(f"alternatives on {alts[0][1]}: {len(alts)} values")


def used_terms(plan: Plan) -> set[IRI]:
    """Ontology terms the plan uses (for checks and explanations)."""
    return {t for t in plan.used if t != RDF_TYPE}

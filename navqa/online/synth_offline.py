"""The deterministic SPARQL synthesizer (the offline backend's "LLM writes the query").

It builds a small query graph from what earlier steps found, using only schema elements
the context allows (the active ontology), so it cannot produce an unmapped term:

1. the **target** is the chosen subgraph's root class (``?t a C``);
2. every **grounded value** becomes a constant on the node of its class, joined to the
   target by the cheapest path — subgraph edges first, then the rest of Ga — where an
   edge's cost falls with its relevance to the question;
3. numbers, years, dates and clock times become **FILTERs** on the best-matching data
   property of a node (years against date properties become date ranges);
4. boolean data properties the question names become constants (``false`` after
   "not"/"no"/"without");
5. "how many" → ``COUNT(DISTINCT ?t)``; superlatives → ``ORDER BY … LIMIT 1`` (or
   ``MAX``/``MIN`` when the question asks for the value: "what is the highest …");
   "when"/"what is the X of" → project that data property; yes/no → ``ASK``;
6. otherwise the target's **name** alone is projected (``SELECT DISTINCT ?name``): the
   values it was filtered or ranked by stay in the query, not in the answer.

Values are always escaped (:func:`navqa.model.terms.escape_string`); nothing from the
question is pasted into the query text unescaped.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from navqa.model.events import Mentions, ValueMention
from navqa.model.iri import IRI, OWL_THING, RDF_TYPE, XSD, local_name
from navqa.model.terms import escape_string
from navqa.online.context import BOOLEAN, DATES, NUMERIC, TIMES, Neighbour, SchemaContext
from navqa.online.expansion import Subgraph
from navqa.online.linking import Linking
from navqa.online.mentions import STOP, SUPERLATIVE_NOUN
from navqa.online.values import GroundedValue, UnmatchedValue

NEGATIONS = ("not", "no", "without", "non", "never", "neither", "nor")
_AGG_WORDS = {"average": "AVG", "mean": "AVG", "total": "SUM", "sum": "SUM",
              "highest": "MAX", "maximum": "MAX", "largest": "MAX", "top": "MAX",
              "greatest": "MAX", "lowest": "MIN", "minimum": "MIN", "smallest": "MIN"}
_ATTR_Q = re.compile(
    r"^\W*(?:what|which)\s+(?:is|are|was|were)\s+the\s+(?P<phrase>[\w\s\-]+?)\s+"
    r"(?:of|for|on|in)\b", re.I)
_IN_WHAT_YEAR = re.compile(r"\b(?:in\s+)?(?:what|which)\s+year\b", re.I)
_HOW_MUCH = re.compile(r"^\W*how\s+(?:much|large|long|deep|big|high|old)\s+(?P<phrase>.+?)\W*$",
                       re.I)


@dataclass
class Plan:
    """A query under construction."""

    triples: list[tuple[str, str, str]] = field(default_factory=list)
    filters: list[str] = field(default_factory=list)
    optionals: list[str] = field(default_factory=list)
    select: list[str] = field(default_factory=list)
    distinct: bool = True
    order: str | None = None
    limit: int | None = None
    ask: bool = False
    used: set[IRI] = field(default_factory=set)
    var_class: dict[str, IRI | None] = field(default_factory=dict)
    data_vars: dict[tuple[str, IRI], str] = field(default_factory=dict)
    explain: list[str] = field(default_factory=list)
    month_asked: bool = False

    def new_var(self, base: str) -> str:
        base = re.sub(r"[^A-Za-z0-9_]", "", base[:1].lower() + base[1:]) or "x"
        name, i = base, 2
        while f"?{name}" in self.var_class or any(f"?{name}" == v for v in
                                                    self.data_vars.values()):
            name, i = f"{base}{i}", i + 1
        return f"?{name}"

    def add(self, s: str, p: str, o: str) -> None:
        if (s, p, o) not in self.triples:
            self.triples.append((s, p, o))

    def data_var(self, ctx: SchemaContext, var: str, prop: IRI) -> str:
        """The variable holding ``prop`` of ``var`` (one per pair)."""
        key = (var, prop)
        if key not in self.data_vars:
            name = self.new_var(local_name(prop))
            self.data_vars[key] = name
            self.add(var, ctx.compact(prop), name)
            self.used.add(prop)
        return self.data_vars[key]


def render(ctx: SchemaContext, plan: Plan) -> str:
    """The plan as SPARQL text with the prefixes it uses."""
    body = [f"  {s} {p} {o} ." for s, p, o in plan.triples]
    body += [f"  OPTIONAL {{ {o} }}" for o in plan.optionals]
    body += [f"  FILTER({f})" for f in plan.filters]
    text = "\n".join(body)
    used_prefixes = sorted({m.group(1) for m in re.finditer(r"(?<![\w?])([A-Za-z][\w\-]*):",
                                                            text + " ".join(plan.select))
                            if m.group(1) in ctx.prefixes})
    head = "".join(f"PREFIX {p}: <{ctx.prefixes[p]}>\n" for p in used_prefixes)
    if plan.ask:
        return f"{head}ASK WHERE {{\n{text}\n}}"
    sel = " ".join(plan.select)
    q = f"{head}SELECT {'DISTINCT ' if plan.distinct else ''}{sel} WHERE {{\n{text}\n}}"
    if plan.order:
        q += f"\nORDER BY {plan.order}"
    if plan.limit is not None:
        q += f"\nLIMIT {plan.limit}"
    return q


def literal(value: str, datatype: IRI | None = None) -> str:
    """A SPARQL literal with the value escaped."""
    body = f'"{escape_string(value)}"'
    if datatype and datatype != XSD + "string":
        return f"{body}^^<{datatype}>"
    return body


class OfflineSynthesizer:
    """Deterministic question → SPARQL over a chosen subgraph."""

    method = "offline"

    def __init__(self, ctx: SchemaContext) -> None:
        self.ctx = ctx

    # -- helpers -------------------------------------------------------------------------

    def _sim(self, iri: IRI, vec: np.ndarray) -> float:
        v = self.ctx.vector(iri)
        return float(v @ vec) if v is not None else 0.0

    def _phrase_vec(self, text: str) -> np.ndarray | None:
        words = [w for w in re.findall(r"[a-zà-ÿ\-]+", text.lower()) if w not in STOP]
        if not words:
            return None
        return self.ctx.embed([" ".join(words)])[0]

    def _edge_cost(self, prop: IRI, in_sub: bool, linking: Linking) -> float:
        s = linking.property_scores.get(prop, 0.0)
        cost = 1.0 + max(0.0, 0.6 - s)
        return cost * (0.85 if in_sub else 1.0)

    def _path(self, start: IRI, goals: set[IRI], sub: Subgraph, linking: Linking,
              max_len: int = 4) -> list[Neighbour] | None:
        """Cheapest object-property path from ``start`` to a class of ``goals``.

        An edge costs less when its property is relevant to the question, when it is in
        the chosen subgraph, and when it leads through a class the question mentions.
        Ending on a superclass of a goal (an instance of it may be of the goal class; the
        constant pins it down) costs a little more than ending on the goal itself.
        """
        ctx = self.ctx
        sub_edges = {e.triple for e in sub.edges}
        sub_props = {e.prop for e in sub.edges}
        exact = {g for goal in goals for g in ctx.ontology.subclasses(goal)}
        loose = {g for goal in goals for g in ctx.ontology.superclasses(goal)} - exact - {
            OWL_THING}
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
            if path and node in loose and (found is None or cost + 0.5 < found[0]):
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
                step -= 0.5 * max(0.0, linking.class_scores.get(other, 0.0) - 0.45)
                counter += 1
                heapq.heappush(heap, (cost + max(step, 0.3), counter, other, [*path, n]))
        return found[1] if found else None

    def _lineage_match(self, a: IRI, classes: tuple[IRI, ...]) -> bool:
        sup = self.ctx.ontology.superclasses
        return any(c == a or a in sup(c) or c in sup(a) for c in classes)

    # -- main ----------------------------------------------------------------------------

    def __call__(self, question: str, mentions: Mentions, linking: Linking,
                 groundings: list[GroundedValue], sub: Subgraph, *,
                 ungrounded: Sequence[UnmatchedValue] = ()) -> tuple[str, Plan]:
        ctx = self.ctx
        q_low = question.lower()
        # per question, so on the plan: one synthesizer serves concurrent questions
        plan = Plan(month_asked=bool(re.search(
            r"\bmonth|\b(?:january|february|march|april|may|june|july|august|september|"
            r"october|november|december)\b", q_low)))
        root = sub.root
        t = plan.new_var(local_name(root))
        plan.var_class[t] = root
        plan.add(t, "a", ctx.compact(root))
        plan.used.add(root)
        plan.explain.append(f"target {ctx.compact(root)} as {t}")
        node_vars: dict[IRI, str] = {root: t}

        # 2. anchors: one grounding per mention, the best-connected one
        by_mention: dict[str, list[GroundedValue]] = {}
        for g in groundings:
            by_mention.setdefault(g.mention.text, []).append(g)
        for text, options in by_mention.items():
            choice = self._attach_anchor(plan, options, root, t, sub, linking, node_vars)
            if choice is not None:
                plan.explain.append(f"value {text!r} → {ctx.compact(choice.prop)} "
                                    f"{choice.stored!r}")
        # a value found nowhere keeps its constraint, as written: where the nearest stored
        # values live (their property and class), else on the target's name
        for u in ungrounded:
            if u.kept:
                self._keep_ungrounded(plan, u, root, t, sub, linking, node_vars)

        # 4. booleans on the target, and values it must not have
        self._booleans(plan, question, mentions, linking, t, root)
        self._missing_values(plan, question, t, root)

        # 3. numeric / date / time filters
        for v in mentions.values:
            if v.kind != "string":
                self._value_filter(plan, question, v)

        # 5. answer form
        cues = mentions.cues
        if cues.yes_no:
            plan.ask = True
            return render(ctx, plan), plan
        if cues.how_many:
            plan.select = [f"(COUNT(DISTINCT {t}) AS ?count)"]
            plan.distinct = False
            return render(ctx, plan), plan
        if cues.superlative:
            self._superlative(plan, question, cues.superlative, cues.superlative_word or "", t)
        attr = self._asked_attribute(plan, question, linking)
        if attr is not None:
            return render(ctx, plan), plan
        name_prop = ctx.name_property(root)
        head = plan.data_var(ctx, t, name_prop) if name_prop is not None else t
        # NaVQA's rule, and the convention of our question sets (datasets/demo/README.md):
        # project only the answer — the name, not the values it was filtered or ranked by.
        plan.select = [head]
        return render(ctx, plan), plan

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
                plan.explain.append(f"value {text!r} not found in the data; no name "
                                    f"property of {ctx.compact(root)} to keep it on")
                return
            plan.add(t, ctx.compact(name_prop), literal(text))
            plan.used.add(name_prop)
            prop = name_prop
        else:
            prop = choice.prop
        plan.explain.append(f"value {text!r} not found in the data: kept as written on "
                            f"{ctx.compact(prop)}")

    def _attach_anchor(self, plan: Plan, options: list[GroundedValue], root: IRI, t: str,
                       sub: Subgraph, linking: Linking, node_vars: dict[IRI, str]
                       ) -> GroundedValue | None:
        ctx = self.ctx
        same = [g for g in options if self._lineage_match(root, g.classes)
                and ctx.allowed(g.prop)]
        if same:
            g = same[0]
            plan.add(t, ctx.compact(g.prop), literal(g.stored))
            plan.used.add(g.prop)
            return g
        best: tuple[float, GroundedValue, list[Neighbour]] | None = None
        for g in options:
            if not g.classes or not ctx.allowed(g.prop):
                continue
            path = self._path(root, set(g.classes), sub, linking)
            if path is None:
                continue
            cost = sum(self._edge_cost(n.edge.prop, False, linking) for n in path)
            cost -= 0.3 * max((linking.class_scores.get(c, 0.0) for c in g.classes), default=0)
            if best is None or cost < best[0]:
                best = (cost, g, path)
        if best is None:
            return None
        _, g, path = best
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
        plan.add(var, ctx.compact(g.prop), literal(g.stored))
        plan.used.add(g.prop)
        return g

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
        m = re.search(r"\b(?:no|without|lack(?:s|ing)?)\s+(?:known\s+|recorded\s+|listed\s+)?"
                      r"(?P<phrase>[a-zà-ÿ][a-zà-ÿ\- ]{2,40}?)(?=\?|$|,|\s+(?:and|or|in|on)\b)",
                      question, re.I)
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
        plan.optionals.append(f"{var} {ctx.compact(best)} {x}")
        plan.filters.append(f"!BOUND({x})")
        plan.used.add(best)
        plan.explain.append(f"missing value: no {ctx.compact(best)}")

    def _find_property(self, plan: Plan, vec: np.ndarray, kinds: frozenset[IRI], *,
                       minimum: float, prefer: str | None = None,
                       score_fn: Any = None) -> tuple[str, IRI] | None:
        """The data property best matching ``vec`` on a plan node, or one hop away.

        NPD and similar VKGs reify facts (a field's yearly production, its reserves, its
        operator history): "how much oil did Statfjord produce" needs ``producedOil`` of
        the ``FieldYearlyProduction`` next to the field. A property of a neighbouring
        class competes with a small penalty; when it wins, the join is added.
        """
        ctx = self.ctx
        best: tuple[float, str, IRI, Neighbour | None] | None = None
        for var, prop in self._candidate_props(plan, kinds):
            sc = score_fn(var, prop) if score_fn else self._sim(prop, vec)
            sc += 0.05 if var == prefer else 0.0
            if best is None or sc > best[0]:
                best = (sc, var, prop, None)
        for var, cls in list(plan.var_class.items()):
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
                    if best is None or sc > best[0]:
                        best = (sc, var, e.prop, n)
        if best is None or best[0] < minimum:
            return None
        _, var, prop, via = best
        if via is None:
            return var, prop
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
        pos = question.find(v.text) if v.kind not in ("time",) else -1
        if pos < 0:
            digits = re.search(r"\d", question)
            pos = digits.start() if digits else 0
        window = question[max(0, pos - 40): pos] + " " + question[pos + len(v.text): pos +
                                                                   len(v.text) + 40]
        vec = self._phrase_vec(window)
        if vec is None:
            vec = self._phrase_vec(question)
        assert vec is not None

        def score(var: str, prop: IRI) -> float:
            s = self._sim(prop, vec)
            name = local_name(prop).lower()
            dt = ctx.datatype(prop)
            if v.kind == "year":
                s += 0.25 if ("year" in name or dt in DATES) else -0.2
            if v.kind == "number" and "year" in name:
                s -= 0.3
            return s

        found = self._find_property(plan, vec, frozenset(kinds), minimum=0.2,
                                    prefer=next(iter(plan.var_class)), score_fn=score)
        if found is None:
            plan.explain.append(f"no property for the value {v.text!r}")
            return
        var, prop = found
        dt = ctx.datatype(prop, plan.var_class.get(var))
        x = plan.data_var(ctx, var, prop)
        op = v.comparator
        if v.kind == "time":
            cmp_op = "=" if op == "decade" else op
            plan.filters.append(f"STR({x}) {cmp_op} {literal(v.text)}")
        elif dt in DATES and v.kind in ("year", "number"):
            y = int(float(v.text))
            lo, hi = {"=": (y, y + 1), "decade": (y, y + 10), ">": (y + 1, None),
                      ">=": (y, None), "<": (None, y), "<=": (None, y + 1)}.get(op, (y, y + 1))
            if lo is not None:
                plan.filters.append(f"{x} >= {literal(f'{lo:04d}-01-01', XSD + 'date')}")
            if hi is not None:
                plan.filters.append(f"{x} < {literal(f'{hi:04d}-01-01', XSD + 'date')}")
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

    def _superlative(self, plan: Plan, question: str, direction: str, word: str,
                     var: str) -> str | None:
        low = question.lower()
        head, _, tail = low.partition(word) if word in low else ("", "", low)
        vec = self._phrase_vec(" ".join(head.split()[-3:] + tail.split()[:4]) + " "
                               + SUPERLATIVE_NOUN.get(word, ""))
        if vec is None:
            return None
        found = self._find_property(plan, vec, frozenset(NUMERIC | DATES | TIMES),
                                    minimum=0.2, prefer=var)
        if found is None:
            return None
        v, prop = found
        x = plan.data_var(self.ctx, v, prop)
        plan.order = f"{'DESC' if direction == 'max' else 'ASC'}({x})"
        plan.limit = 1
        plan.explain.append(f"superlative {word!r}: order by {self.ctx.compact(prop)}")
        return x

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
        # the first aggregate word governs: "the average total depth" is an average
        agg = next((_AGG_WORDS[w] for w in phrase.lower().split() if w in _AGG_WORDS),
                   None) if (m or how_much) else None
        if cues_when:
            kinds = frozenset(DATES | TIMES | NUMERIC)
        elif year:
            kinds = frozenset(DATES | NUMERIC)
        else:
            kinds = frozenset(NUMERIC | DATES | TIMES | {XSD + "string", BOOLEAN})
        vec = self._phrase_vec(phrase if (m or how_much) else question)
        if vec is None:
            return None
        name_props = set(ctx.name_like_properties)

        def score(var: str, prop: IRI) -> float:
            if prop in name_props:
                return -1.0
            s = self._sim(prop, vec)
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


def used_terms(plan: Plan) -> set[IRI]:
    """Ontology terms the plan uses (for checks and explanations)."""
    return {t for t in plan.used if t != RDF_TYPE}

"""The offline synthesizer's grammar rules that can be switched off one at a time.

Each rule covers one question shape or one grounding step (docs/online.md, "The offline
synthesizer"). Switching one off (``pipeline.disabled_rules``, or ``navqa eval --ablate
no-rule-<name>``) is how the held-out discipline is applied: a rule that helps the dev
split and not the validation split is dropped (the test split decides nothing). A query
records the rules that shaped it (:class:`~navqa.model.events.QuerySynthesized`
``rules``), so an ablation only needs to answer again the questions where a rule fired.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["GrammarRule"]


class GrammarRule(StrEnum):
    """A switchable rule of the offline pipeline, named for the shape it covers."""

    COUNT_RANK = "count-rank"
    """"Which X has the most Y?": GROUP BY X, ORDER BY the count of Y."""
    COUNT_BOUND = "count-bound"
    """"X with more than 60 different Y": GROUP BY X HAVING a bound on the count."""
    PER_YEAR = "per-year"
    """"How many X in each year?": GROUP BY the year of X's date."""
    CONJOINED_VALUES = "conjoined-values"
    """"expressed both in A and in B": a second value of the same kind gets a join of its
    own (one entity cannot have both), unless the values are alternatives ("A or B")."""
    STRING_PATTERN = "string-pattern"
    """"a name starting with 'Cec'": STRSTARTS / STRENDS / CONTAINS on the target."""
    NEGATED_VALUE = "negated-value"
    """"… but not in the brain": the value's join in MINUS."""
    NEGATED_RELATION = "negated-relation"
    """"X that do not have any Y": MINUS of the relation one step away."""
    PRESENT_TIME = "present-time"
    """"currently / still": intervals without an end date, or ending in the future."""
    SPATIAL = "spatial"
    """"within 3 km of X", "how far apart": GeoSPARQL distances."""
    REQUIRED_COLUMN = "required-column"
    """A further projected column is required (an answer without it is left out) unless
    the question says it may be missing ("… and its depth, if any": OPTIONAL). Off, every
    further column is OPTIONAL."""
    YEAR_PROPERTY = "year-property"
    """"drilled in 2010": a property that records years (an integer named for a year) is
    preferred to a date cut to its year. Off, both count the same."""
    COARSEST_FACT = "coarsest-fact"
    """A figure recorded at two grains next to a node (a field's reserves, and per company):
    the grain about fewer things the question does not name wins a tie."""
    FACT_AFFINITY = "fact-affinity"
    """Neighbour classes that offer the asked property equally well (a year on the yearly
    production and on the yearly investment): the one whose other properties the question
    speaks of most ("how much oil … in 1990": the production, which records the oil)."""
    ABBREVIATED_VALUE = "abbreviated-value"
    """A stored value that spells the mention with some words abbreviated ("Zechstein
    Group" stored as "ZECHSTEIN GP") grounds it; off, such a mention stays ungrounded and
    its constraint is kept as written."""
    RESTATED_VALUE = "restated-value"
    """A query that only gives back a value the question states (the name of the entity it
    names: "Who operates the Troll field?" → "TROLL") answers nothing: the next subgraph
    of the rerank whose query asks something else is chosen instead."""
    RANKED_NOUN = "ranked-noun"
    """"What is the deepest exploration well Lundin has drilled?": when the noun after a
    superlative that has a dimension of its own (deepest: depth) names the answer's class,
    the ordering is by the dimension alone, not by the words of that noun phrase; off,
    the words around the superlative choose the property together with the dimension."""
    PLACED_COLUMNS = "placed-columns"
    """"Which wells did X drill, and how deep are they?": when the best-ranked root's query
    leaves an asked column unplaced, a lower-ranked root whose query places more of the
    asked columns, and has an answer, is chosen instead (the search of
    :mod:`navqa.online.synthesis.scoring`); off, unplaced columns do not count."""
    ENTITY_PHRASE = "entity-phrase"
    """"What is the first station of service X?": an attribute phrase whose head noun names
    the target's class asks for the entity (its name), not for one of its values."""
    NUMBERED_NAME = "numbered-name"
    """"production licence 501": a bare number right after a noun is the name of the
    numbered thing when the data stores it as the name of an entity of the class the noun
    names; off, such a number is always a quantity."""
    SHARED_RECORD = "shared-record"
    """"Which genes are expressed in the head during the adult stage?": two values of
    different classes that the answer reaches by the same property (``isExpressedIn`` to
    an anatomical entity and to a stage) are held by one record that the same property
    also reaches and that links to both (an expression condition): both are joined
    through that one record; off, each is joined to the answer on its own, and any
    record may hold either."""
    PLAIN_NAME = "plain-name"
    """"Which genes are expressed in the midgut?": a lower-case phrase of one to five words
    that the data stores, with the same case, as the value of a name-like property (alone
    or with a parenthesised qualifier) is a name, found by one bounded probe for all such
    phrases (:mod:`navqa.online.plain_names`); off, only quoted and capitalised names are
    values."""
    ROLE_STAND_IN = "role-stand-in"
    """"Which rig drilled wellbore X?", where no mapped class is a rig: of the mapped
    classes that could stand in for the unmapped one the question names, one that an
    object property names in the role the question's verb says ("drilling facility", for
    "which rig drilled") wins; off, only the classes' names and vectors count."""
    RELATION_COLUMN = "relation-column"
    """"Which companies hold a share in X, and how large is each share?": an asked column
    that is on neither node but on a relation class linking the answer and X (a link table
    with attributes) is projected from that relation, which replaces the direct join
    between them; off, only the query's own nodes offer columns."""
    RECORD_COLUMN = "record-column"
    """"What is the status of field X, and since when has it had it?": the asked value
    (the status) is also kept, with the asked further column (its start date), on a
    nameless record linked to the node (the field's status history); both are projected
    from the record; off, the further column is sought on the node only."""
    COLUMN_FALLBACK = "column-fallback"
    """"Which pipelines start at X, and where do they end?": an asked column that no
    property of the query's nodes, no relation and no class the phrase names gives is the
    entity an object property of the answer links it to, when the phrase names that
    property (``pipelineToFacility``: its name), else a value one join away; off, such a
    column is reported as not placed."""
    ANCHOR_SIDE = "anchor-side"
    """"Which pipelines start at X?": a value after a word for one side of an interval
    (start, from, since / end, to, until) is joined through the edge named for that side
    (``pipelineFromFacility``), not the other (``pipelineToFacility``); off, the edges'
    relevance to the whole question decides."""
    CLASS_COLUMN = "class-column"
    """"List the discoveries of 2009 together with the field they belong to": an asked
    column whose phrase names a class linked to the answer by an object property, when the
    data property found for it shares no word with the phrase but the class's name
    (``dateIncludedInField``), is the linked entity (its name); off, the data property."""
    CODE_VALUE = "code-value"
    """"How many lighthouses …?": a label of a code list (a class of coded values that
    features point to, "Lighthouse"@en of the structure functions) that the question
    spells out is a constraint joined through the code, and when it names the answer the
    class whose instances have the code is the answer class; off, such words only link."""

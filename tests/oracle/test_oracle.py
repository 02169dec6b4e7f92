"""navqa's "populated" verdict equals what a live Ontop 5.1.2 answers, element by element.

For every class and property a VKG's ontology declares, ``ASK { ?s a C }`` /
``ASK { ?s p ?o }`` on the real endpoint must be true exactly when navqa's notion
(:class:`navqa.offline.entailment.QlTBox`, the closure behind the active ontology that
``audit``, ``lint``, ``suggest`` and the pipeline's check use) says the element has rows.

"Populated" is a schema verdict; ASK also sees the data. So the oracle compares ASK with
``populated(seeds with rows)``: the same function, seeded with the mapped terms that have
at least one atom whose SQL returns a row with every column of the atom non-NULL (what
Ontop turns into a triple). Elements that are populated but have no rows this way are the
*data-empty* ones; they are counted and printed, and must all answer ASK false.

Known disagreements that are Ontop's doing, not navqa's, are listed in ``ONTOP_QUIRKS``
with the reason; each must still disagree (a strict xfail for that element only).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from navqa.backends.sparql_http import HttpSparqlEndpoint
from navqa.model.iri import IRI
from navqa.model.mapping import MappingAtom, MappingSet
from navqa.model.ontology import Ontology
from navqa.offline.artifacts import parse_mappings
from navqa.offline.closure import build_active_ontology, ql_tbox
from navqa.offline.ontology_parser import ontology_from_graph, read_ontology_graph
from navqa.runtime.ontop import OntopProcess, OntopSpec
from navqa.runtime.postgres import PgConnection, recreate_database
from navqa.runtime.vkg import mapping_file, xml_catalog

pytestmark = [pytest.mark.ontop, pytest.mark.postgres]

HERE = Path(__file__).parent / "vkg"
NS = "http://example.org/oracle#"

#: (vkg, element) -> why Ontop's answer differs from the OWL 2 QL verdict.
ONTOP_QUIRKS: dict[tuple[str, IRI], str] = {}


@dataclass
class Verdicts:
    """One VKG's elements, navqa's verdicts and Ontop's answers."""

    name: str
    declared: frozenset[IRI]
    schema: frozenset[IRI]      # populated by reasoning from the mappings (E)
    with_rows: frozenset[IRI]   # populated from the mapped terms that have rows
    ask: dict[IRI, bool]

    def disagreements(self) -> dict[IRI, tuple[bool, bool]]:
        return {e: (e in self.with_rows, self.ask[e]) for e in sorted(self.declared)
                if (e in self.with_rows) != self.ask[e]}


def _atom_has_rows(c: object, sql: str, atom: MappingAtom) -> bool:
    """Whether the atom's SQL gives a row with all the atom's columns non-NULL."""
    cols = list(atom.subject.columns) + (list(atom.object.columns) if atom.object else [])
    cur = c.execute(f"SELECT * FROM ({sql}) AS oracle_t LIMIT 0")  # type: ignore[attr-defined]
    names = {d.name.lower(): d.name for d in cur.description}
    where = " AND ".join(f'oracle_t."{names.get(col.lower(), col)}" IS NOT NULL'
                         for col in dict.fromkeys(cols))
    q = f"SELECT 1 FROM ({sql}) AS oracle_t" + (f" WHERE {where}" if where else "") + " LIMIT 1"
    return c.execute(q).fetchone() is not None  # type: ignore[attr-defined]


def seeds_with_rows(pg: PgConnection, db: str, mappings: MappingSet) -> frozenset[IRI]:
    """The mapped terms with at least one atom that yields a triple."""
    out: set[IRI] = set()
    with pg.connect(db, autocommit=True) as c:
        for a in mappings:
            todo = [at for at in a.atoms if at.predicate not in out]
            for atom in todo:
                if atom.predicate not in out and _atom_has_rows(c, a.source, atom):
                    out.add(atom.predicate)
    return frozenset(out)


def ask_all(endpoint: HttpSparqlEndpoint, onto: Ontology) -> dict[IRI, bool]:
    def one(iri: IRI) -> tuple[IRI, bool]:
        pattern = f"?s a <{iri}>" if iri in onto.classes else f"?s <{iri}> ?o"
        return iri, endpoint.ask(f"ASK {{ {pattern} }}", timeout=600).value

    with ThreadPoolExecutor(max_workers=3) as pool:
        return dict(pool.map(one, sorted(onto.signature)))


def verdicts(name: str, ontology_path: Path, catalog: Path | None, mapping_path: Path,
             pg: PgConnection, db: str, endpoint: HttpSparqlEndpoint) -> Verdicts:
    rdf = read_ontology_graph(ontology_path, catalog=catalog, follow_imports=catalog is not None)
    onto = ontology_from_graph(rdf)
    maps = parse_mappings(mapping_path)
    active = build_active_ontology(onto, maps, graph=rdf.graph)
    tbox = ql_tbox(onto, rdf.graph)
    # the audits' notion is this function, seeded with every mapped term
    assert active.signature == tbox.populated(maps.signature()) & onto.signature \
        | maps.signature()
    with_rows = tbox.populated(seeds_with_rows(pg, db, maps))
    return Verdicts(name, onto.signature, active.signature & onto.signature,
                    with_rows & onto.signature, ask_all(endpoint, onto))


def _check(v: Verdicts) -> None:
    dis = v.disagreements()
    data_empty = v.schema - v.with_rows
    print(f"\n[oracle] {v.name}: {len(v.declared)} elements checked, "
          f"{len(v.schema)} populated by reasoning, {len(data_empty)} of them data-empty, "
          f"{sum(v.ask.values())} ASK true, {len(dis)} disagreements "
          f"({len([e for e in dis if (v.name, e) in ONTOP_QUIRKS])} known Ontop quirks)")
    for e, (ours, ontop) in dis.items():
        print(f"[oracle]   {e}: navqa {'rows' if ours else 'empty'}, "
              f"Ontop {'rows' if ontop else 'empty'}")
    assert v.with_rows <= v.schema
    unexplained = {e: d for e, d in dis.items() if (v.name, e) not in ONTOP_QUIRKS}
    assert unexplained == {}
    stale = [e for (n, e) in ONTOP_QUIRKS if n == v.name and e not in dis]
    assert stale == [], "these quirks no longer disagree: remove them from ONTOP_QUIRKS"


# -- the test VKG: one construct per element ----------------------------------------------------


@pytest.fixture(scope="module")
def oracle_vkg(pg: PgConnection, ontop_install, tmp_path_factory) -> Iterator[Verdicts]:
    db = "navqa_oracle"
    recreate_database(pg, db)
    with pg.connect(db, autocommit=True) as c:
        c.execute((HERE / "data.sql").read_text())
    tmp = tmp_path_factory.mktemp("oracle")
    spec = OntopSpec(ontology=HERE / "ontology.ttl", mapping=HERE / "mapping.obda",
                     jdbc_url=pg.jdbc_url(db), user=pg.user, password=pg.password)
    with OntopProcess(ontop_install, spec, log_path=tmp / "ontop.log").start(timeout=180) as p:
        endpoint = HttpSparqlEndpoint(p.url, timeout=120)
        yield verdicts("oracle", HERE / "ontology.ttl", None, HERE / "mapping.obda", pg, db,
                       endpoint)


#: What each construct of tests/oracle/vkg does, as Ontop 5.1.2 answers it.
ORACLE_POPULATED = {
    "Employee": "mapped",
    "Person": "superclass of Employee",
    "Human": "owl:equivalentClass Person",
    "BadgeHolder": "Employee ⊑ ∃hasBadge.Badge and ∃hasBadge ⊑ BadgeHolder",
    "Organisation": "range of worksFor",
    "Managed": "domain of managedBy, nothing else",
    "Named": "domain of the data property hasName",
    "Supervisor": "∃supervises ⊑ Supervisor (unqualified existential on the left)",
    "worksFor": "mapped",
    "relatedTo": "super-property of worksFor",
    "associatedWith": "owl:equivalentProperty relatedTo",
    "employs": "owl:inverseOf worksFor, nothing else",
    "managedBy": "mapped",
    "supervises": "mapped",
    "locatedIn": "mapped",
    "hasName": "mapped",
    "fullName": "owl:equivalentProperty hasName (data property)",
    "Company": "no mapping, but the ontology asserts :acme a :Company: Ontop serves it",
}
ORACLE_EMPTY = {
    "Badge": "filler of a right-hand existential (no existential reasoning)",
    "hasBadge": "property of a right-hand existential",
    "TeamLead": "∃supervises.Employee ⊑ TeamLead is outside OWL 2 QL",
    "City": "member of a union range (outside OWL 2 QL)",
    "Country": "member of a union range (outside OWL 2 QL)",
    "Unicorn": "unmapped class",
    "ridesUnicorn": "unmapped object property",
    "unicornName": "unmapped data property",
}
ORACLE_DATA_EMPTY = {
    "Contractor": "mapped, but its SQL returns no rows",
    "nickname": "mapped to a column that is NULL in every row",
}


def test_oracle_vkg_covers_every_construct(oracle_vkg: Verdicts) -> None:
    """Every element of the test VKG is classified, and Ontop agrees element by element."""
    named = {NS + k for k in (*ORACLE_POPULATED, *ORACLE_EMPTY, *ORACLE_DATA_EMPTY)}
    assert named == oracle_vkg.declared
    assert oracle_vkg.with_rows == {NS + k for k in ORACLE_POPULATED}
    assert oracle_vkg.schema == {NS + k for k in (*ORACLE_POPULATED, *ORACLE_DATA_EMPTY)}
    assert {e for e, v in oracle_vkg.ask.items() if v} == {NS + k for k in ORACLE_POPULATED}
    _check(oracle_vkg)


# -- the shipped VKGs -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", [
    "demo",
    pytest.param("npd", marks=pytest.mark.npd),
    pytest.param("bgee", marks=pytest.mark.bgee),
    pytest.param("atkis", marks=pytest.mark.atkis),
])
def test_verdicts_match_ontop(name: str, vkg: Callable[..., object], navqa_config) -> None:
    served = vkg(name)
    ds = served.dataset  # type: ignore[attr-defined]
    v = verdicts(name, ds.path("ontology"), xml_catalog(navqa_config, ds), mapping_file(ds, None),
                 served.pg, served.database, served.endpoint)  # type: ignore[attr-defined]
    _check(v)


def test_reasoning_elements_name_what_populates_them() -> None:
    """The audit's "populated through reasoning … via" comes from the same reasoning."""
    rdf = read_ontology_graph(HERE / "ontology.ttl")
    onto = ontology_from_graph(rdf)
    active = build_active_ontology(onto, parse_mappings(HERE / "mapping.obda"), graph=rdf.graph)
    via = {k.removeprefix(NS): {v.removeprefix(NS) for v in vs} for k, vs in active.via.items()}
    assert via["employs"] == {"worksFor"}
    # worksFor's domain is Employee, and Employee ⊑ ∃hasBadge ⊑ BadgeHolder
    assert via["BadgeHolder"] == {"Employee", "worksFor"}
    assert via["Human"] == via["Person"] == {"Employee", "worksFor"}
    assert via["Supervisor"] == {"supervises"}
    assert via["Organisation"] == {"worksFor"}
    assert via["Named"] == {"hasName"}
    assert via["associatedWith"] == {"worksFor"}
    assert set(via) == set(ORACLE_POPULATED) - {"Employee", "worksFor", "managedBy",
                                                "supervises", "locatedIn", "hasName"}

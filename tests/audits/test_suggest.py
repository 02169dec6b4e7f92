"""``navqa suggest``: logs in, demand for unmapped elements, drafts validated by real Ontop.

Demo expectations come from ``datasets/demo/README.md``: the questions marked ``trap``
need the five deliberately unmapped elements, and each trap names the mapped path a
draft can follow (``stationRegion``: Station – locatedInCity → City – partOfRegion →
Region; ``openingYear`` from ``station.opened_on``).
"""

from __future__ import annotations

import hashlib
import json
import subprocess

import pytest
from audit_helpers import DEMO_NS, NAVQA, REPO, questions

from navqa.audits.schema import introspect
from navqa.audits.suggest import (
    Demand,
    LogEntry,
    ScratchVkg,
    build_suggestions,
    compute_demand,
    insert_drafts,
    read_log,
    render_suggest_markdown,
    validate_drafts,
)
from navqa.offline.obda_parser import parse_obda_text
from navqa.runtime.vkg import mapping_file, xml_catalog

R = DEMO_NS
TRAPS = {R + x for x in ("operatesLine", "stopsAt", "stationRegion", "Train", "openingYear")}


def test_read_log_accepts_questions_traces_and_ontop_logs(tmp_path) -> None:
    plain = tmp_path / "q.txt"
    plain.write_text("# questions\nWhich region is Kestrel Junction in?\n\nHow many trains?\n",
                     encoding="utf-8")
    assert [(e.origin, e.question) for e in read_log(plain)] == [
        ("question", "Which region is Kestrel Junction in?"), ("question", "How many trains?")]

    jsonl = tmp_path / "q.jsonl"
    jsonl.write_text('{"id": "a", "question": "Which lines does X operate?"}\n'
                     '{"question": "Where does 2L01 stop?"}\n', encoding="utf-8")
    assert [e.question for e in read_log(jsonl)] == ["Which lines does X operate?",
                                                      "Where does 2L01 stop?"]

    # two `navqa ask --json` outputs (indented JSON) one after the other
    trace = {"question": "Which services stop at Kestrel Junction?", "sparql": None,
             "events": [{"type": "MentionsExtracted", "stage": "mentions",
                         "mentions": {"classes": ["services"], "properties": ["stop at"],
                                      "values": [{"text": "Kestrel Junction"}]}},
                        {"type": "QueryChecked", "stage": "check", "ok": False,
                         "unmapped_terms": [R + "stopsAt"]}]}
    traces = tmp_path / "traces.json"
    traces.write_text(json.dumps(trace, indent=1) + "\n" + json.dumps(trace, indent=1),
                      encoding="utf-8")
    entries = read_log(traces)
    assert len(entries) == 2 and entries[0].origin == "trace"
    assert entries[0].used_unmapped == (R + "stopsAt",)
    assert entries[0].mentions is not None and entries[0].mentions.properties == ("stop at",)

    # Ontop query logging: ElasticSearch-style records, and flat ones
    ontop = tmp_path / "ontop.log.jsonl"
    ontop.write_text(json.dumps({"@timestamp": "2026-11-01T10:00:00Z", "message": "query:all",
                                 "payload": {"classesUsedInQuery": [R + "Train"],
                                             "propertiesUsedInQuery": [R + "name"],
                                             "resultCount": 0}}) + "\n"
                     + json.dumps({"classes": [], "properties": [R + "openingYear"]}) + "\n"
                     + json.dumps({"sparqlQuery": f"SELECT * {{ ?s <{R}stopsAt> ?o }}"})
                     + "\n", encoding="utf-8")
    used = [e.used_terms for e in read_log(ontop)]
    assert used == [(R + "Train", R + "name"), (R + "openingYear",), (R + "stopsAt",)]


def test_demand_from_the_demo_trap_questions(index_bundle, embedder) -> None:
    """Linking against the full ontology finds every trap element the trap questions
    need; queries that used an unmapped term count with score 1."""
    traps = [q for q in questions("demo") if q.get("trap")]
    assert len(traps) == 17
    entries = [LogEntry(q["id"], "question", question=q["question"]) for q in traps]
    entries.append(LogEntry("trace-1", "trace", question=None,
                            used_unmapped=(R + "stopsAt", R + "name")))
    demands = compute_demand(index_bundle("demo"), embedder, entries)
    by_iri = {d.iri: d for d in demands}
    assert set(by_iri) <= index_bundle("demo").active.unmapped
    assert set(by_iri) >= TRAPS
    expected = {q["id"]: q["trap"] for q in traps}
    hits = 0
    for iri in TRAPS:
        own = [e for e in by_iri[iri].evidence if expected.get(e.source) == iri]
        assert own, f"no trap question of {iri} needs it"
        hits += len(own)
    print(f"\ntrap questions linked to their own trap: {hits}/17")
    assert hits >= 12
    direct = [e for e in by_iri[R + "stopsAt"].evidence if e.source == "trace-1"]
    assert direct and direct[0].score == 1.0
    assert by_iri[R + "stopsAt"].count >= 2


def _served_scratch(served, pg, ontop_install, navqa_config) -> ScratchVkg:
    ds = served.dataset
    return ScratchVkg(install=ontop_install, ontology=ds.path("ontology"),
                      mapping=mapping_file(ds, "obda"), jdbc_url=pg.jdbc_url(ds.manifest.database),
                      user=pg.user, password=pg.password,
                      properties=dict(ds.manifest.ontop.properties),
                      catalog=xml_catalog(navqa_config, ds))


@pytest.mark.ontop
@pytest.mark.postgres
def test_drafts_for_stationregion_and_openingyear_load_in_ontop_and_return_rows(
        index_bundle, embedder, vkg, pg, ontop_install, navqa_config) -> None:
    served = vkg("demo")
    bundle = index_bundle("demo")
    with pg.connect(served.database) as conn:
        schema = introspect(conn)
    assert {"station", "city", "region"} <= set(schema.tables)
    demands = [Demand(R + "stationRegion", "object_property", "station region"),
               Demand(R + "openingYear", "data_property", "opening year"),
               Demand(R + "Train", "class", "train"),
               Demand(R + "stopsAt", "object_property", "stops at"),
               Demand(R + "operatesLine", "object_property", "operates line")]
    suggestions = build_suggestions(bundle, embedder, demands, schema)
    drafts = {s.demand.iri: s.draft for s in suggestions}
    assert all(drafts.values()), [s.note for s in suggestions]

    region = drafts[R + "stationRegion"]
    # README: Station – locatedInCity → City – partOfRegion → Region
    assert region.target == ("data:station/{station_code} rail:stationRegion "
                             "data:region/{region_id} .")
    assert '"station"' in region.source and '"city"' in region.source
    year = drafts[R + "openingYear"]
    assert year.target.endswith("^^xsd:gYear .") and '"opened_on"' in year.source

    mapping = mapping_file(served.dataset, "obda")
    before = hashlib.sha256(mapping.read_bytes()).hexdigest()
    # the drafts are .obda assertions the native parser reads back
    parse_obda_text(insert_drafts(mapping.read_text(encoding="utf-8"),
                                  list(drafts.values())))
    results = validate_drafts(_served_scratch(served, pg, ontop_install, navqa_config),
                              list(drafts.values()))
    assert hashlib.sha256(mapping.read_bytes()).hexdigest() == before  # never written
    by_iri = dict(zip(drafts, results, strict=True))
    for iri, v in by_iri.items():
        assert v.status == "valid", (iri, v.messages)
        assert v.query_status == "rows", (iri, v.error)
        assert 1 <= len(v.rows) <= 5

    # the rows are right: compare with SQL over the same database
    pairs = {(f"http://example.org/navqa/rail/data/station/{s}",
              f"http://example.org/navqa/rail/data/region/{r}")
             for s, r in served.sql("SELECT s.station_code, c.region_id FROM station s "
                                    "JOIN city c ON c.city_id = s.city_id")}
    assert {tuple(r) for r in by_iri[R + "stationRegion"].rows} <= pairs
    years = {(f"http://example.org/navqa/rail/data/station/{s}", str(int(y)))
             for s, y in served.sql("SELECT station_code, EXTRACT(YEAR FROM opened_on) "
                                    "FROM station WHERE opened_on IS NOT NULL")}
    assert {tuple(r) for r in by_iri[R + "openingYear"].rows} <= years

    for s in suggestions:
        s.validation = by_iri[s.demand.iri]
    from navqa.audits.suggest import SuggestReport

    md = render_suggest_markdown(SuggestReport("demo", "test", 5, suggestions,
                                               prefixes={"rail": R}))
    assert "navqa-draft-stationRegion" in md and "**valid**" in md


@pytest.mark.ontop
@pytest.mark.postgres
def test_an_invalid_draft_is_reported_not_served(index_bundle, embedder, vkg, pg,
                                                 ontop_install, navqa_config) -> None:
    from navqa.audits.suggest import Draft

    served = vkg("demo")
    broken = Draft(R + "openingYear", "navqa-draft-broken",
                   "data:station/{station_code} rail:openingYear {y}^^xsd:gYear .",
                   'SELECT station_code, opened_on AS y FROM "no_such_table"', "test",
                   f"SELECT ?s ?o WHERE {{ ?s <{R}openingYear> ?o }} LIMIT 5")
    [v] = validate_drafts(_served_scratch(served, pg, ontop_install, navqa_config), [broken])
    assert v.status == "invalid" and v.messages and v.query_status is None


@pytest.mark.ontop
@pytest.mark.postgres
@pytest.mark.slow
def test_suggest_cli_end_to_end(cli_env, tmp_path, vkg) -> None:
    vkg("demo")  # the database is loaded; the CLI reuses the cluster
    log = tmp_path / "questions.txt"
    log.write_text("Which region is Kestrel Junction station in?\n"
                   "How many stations are there in the Val-Brûlé region?\n"
                   "Which stations opened in the 1850s?\n", encoding="utf-8")
    mapping = REPO / "mappings/demo.obda"
    before = mapping.read_bytes()
    out = tmp_path / "suggest.json"
    proc = subprocess.run(NAVQA + ["suggest", "--vkg", "demo", "--log", str(log), "--format",
                                   "json", "--out", str(out), "--limit", "2"],
                          env=cli_env, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert mapping.read_bytes() == before
    rep = json.loads(out.read_text(encoding="utf-8"))
    sug = {s["element"]: s for s in rep["suggestions"]}
    assert R + "stationRegion" in sug
    s = sug[R + "stationRegion"]
    assert s["demand"] >= 2
    assert s["draft"]["obda"].startswith("mappingId\tnavqa-draft-stationRegion")
    assert s["validation"]["status"] == "valid" and s["validation"]["query_status"] == "rows"

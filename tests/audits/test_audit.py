"""``navqa audit``: coverage, unmapped elements, mismatches and overlaps, live probes, reports.

The demo expectations come from ``datasets/demo/README.md`` (its ontology section and its
"Deliberately unmapped elements" and "Tables and mappings" tables), not from running the
audit: 19 classes, 19 object and 19 data properties; five traps no mapping populates;
six elements populated only through reasoning; two two-subject targets that restate
``OperatorCompany`` and ``ScheduledService``.
"""

from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest
from audit_helpers import DEMO_NS, NAVQA, REPO

from navqa.audits.coverage import audit, probe_live
from navqa.audits.report import render_html, render_json, render_markdown
from navqa.offline.artifacts import IndexBundle, compute_stats, parse_mappings
from navqa.offline.class_graph import build_class_graph
from navqa.offline.closure import build_active_ontology
from navqa.offline.ontology_parser import parse_ontology

R = DEMO_NS
TRAPS = {R + "operatesLine", R + "stopsAt", R + "stationRegion", R + "Train", R + "openingYear"}
THROUGH_REASONING = {R + "Organisation", R + "Place", R + "Locomotive", R + "Service",
                     R + "locatedIn", R + "lineEndpoint"}


def test_demo_coverage_and_unmapped_elements_match_the_readme(index_bundle) -> None:
    rep = audit(index_bundle("demo"), "demo")
    kinds = {k.name: k for k in rep.by_kind}
    assert {n: kinds[n].declared for n in kinds} == {
        "class": 19, "object_property": 19, "data_property": 19}
    assert {u.iri for u in rep.unmapped} == TRAPS
    assert {r.iri for r in rep.reasoning} == THROUGH_REASONING
    c = rep.coverage
    assert (c.declared, c.unmapped, c.reasoning) == (57, 5, 6)
    assert c.mapped == 57 - 5 - 6
    assert c.coverage == pytest.approx(100 * 46 / 57, abs=0.05)
    # kinds of the traps: Train is the class, openingYear the data property
    assert (kinds["class"].unmapped, kinds["object_property"].unmapped,
            kinds["data_property"].unmapped) == (1, 3, 1)
    # Train's only neighbour in T is its superclass Service, itself not mapped: last rank
    assert rep.unmapped[-1].iri == R + "Train"
    assert rep.unmapped[-1].mapped_neighbours == 0
    # stationRegion links two mapped classes (Station, Region): among the most central
    by_iri = {u.iri: u for u in rep.unmapped}
    assert by_iri[R + "stationRegion"].mapped_neighbours == 2
    assert by_iri[R + "operatesLine"].mapped_neighbours == 2


def test_demo_domain_range_gaps_overlaps_and_no_template_mismatch(index_bundle) -> None:
    rep = audit(index_bundle("demo"), "demo")
    gaps = {(g.prop, g.role, g.cls) for g in rep.domain_range_gaps}
    # headquarteredIn and foundingYear have the domain Organisation, which only its
    # subclasses' mappings populate; builtBy's and name's union domains name Locomotive,
    # Organisation and Place
    assert {(R + "headquarteredIn", "domain", R + "Organisation"),
            (R + "foundingYear", "domain", R + "Organisation"),
            (R + "builtBy", "domain", R + "Locomotive"),
            (R + "name", "domain", R + "Organisation"),
            (R + "name", "domain", R + "Place")} <= gaps
    assert all(g.cls in THROUGH_REASONING for g in rep.domain_range_gaps)
    # every object template of the demo is some class's subject template
    assert rep.template_mismatches == []
    same_atom = {o.key: set(o.mapping_ids) for o in rep.overlaps if o.kind == "same-atom"}
    assert same_atom == {
        "data:company/{} a rail:OperatorCompany": {"demo-operator-company", "demo-franchise"},
        "data:service/{} a rail:ScheduledService": {"demo-service", "demo-stop"},
    }
    assert [o for o in rep.overlaps if o.kind == "identical-sql"] == []
    assert rep.undeclared_mapped == []


def _bundle(ontology: Path, mapping: Path) -> IndexBundle:
    """An index bundle without vectors (the audit needs none)."""
    onto = parse_ontology(ontology)
    maps = parse_mappings(mapping)
    active = build_active_ontology(onto, maps)
    graph = build_class_graph(active, maps)
    return IndexBundle(ontology=onto, mappings=maps, active=active, graph=graph,
                       descriptions={}, class_index=None, property_index=None,  # type: ignore[arg-type]
                       manifest=None)  # type: ignore[arg-type]


@pytest.fixture
def broken_demo(tmp_path) -> IndexBundle:
    """The demo mapping with two template bugs a maintainer could make."""
    text = (REPO / "mappings/demo.obda").read_text(encoding="utf-8")
    # 1. a typo in the object template: no class has data:lines/{} IRIs
    text = text.replace("rail:runsOnLine data:line/{lineCode}",
                        "rail:runsOnLine data:lines/{lineCode}")
    # 2. the service operator points at station IRIs, not at the range OperatorCompany's
    text = text.replace("rail:operatedBy data:company/{operator_id}",
                        "rail:operatedBy data:station/{operator_id}")
    path = tmp_path / "broken.obda"
    path.write_text(text, encoding="utf-8")
    return _bundle(REPO / "ontologies/demo.ttl", path)


def test_template_mismatches_are_found(broken_demo) -> None:
    rep = audit(broken_demo, "broken")
    found = {(t.prop, t.position, t.kind) for t in rep.template_mismatches}
    assert found == {(R + "runsOnLine", "object", "orphan"),
                     (R + "operatedBy", "object", "range")}
    rng = next(t for t in rep.template_mismatches if t.kind == "range")
    assert rng.expected == (R + "OperatorCompany",)
    assert rng.mapping_ids == ("demo-service",)
    assert "data:company/{}" in rng.expected_templates


def test_audit_figures_agree_with_index_stats(index_bundle, cli_env) -> None:
    """Same numbers as `navqa index --stats` (its JSON), for the same VKG."""
    idx = subprocess.run(NAVQA + ["index", "--vkg", "demo", "--json", "--no-llm"], env=cli_env,
                         capture_output=True, text=True, timeout=600)
    assert idx.returncode == 0, idx.stderr[-2000:]
    stats = json.loads(idx.stdout)["stats"]
    aud = subprocess.run(NAVQA + ["audit", "--vkg", "demo", "--format", "json"], env=cli_env,
                         capture_output=True, text=True, timeout=600)
    assert aud.returncode == 0, aud.stderr[-2000:]
    rep = json.loads(aud.stdout)
    for key in ("ontology", "closure", "class_graph", "mappings"):
        assert rep["stats"][key] == stats[key]
    seeds, act, onto = stats["closure"]["seeds"], stats["closure"]["active"], stats["ontology"]
    for row in rep["by_kind"]:
        k = row["name"]
        assert row["mapped"] == seeds[k]
        assert row["mapped"] + row["reasoning"] == act[k]
        assert row["declared"] == onto[{"class": "classes", "object_property":
                                        "object_properties", "data_property":
                                        "data_properties"}[k]]
    total = rep["coverage"]
    assert total["unmapped"] == stats["closure"]["unmapped_declared"]
    assert total["mapped"] == sum(seeds[k] for k in ("class", "object_property",
                                                     "data_property"))


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.findings: list[str] = []
        self.tags: list[str] = []
        self.scripts_with_src = 0
        self.links = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        a = dict(attrs)
        if "data-finding" in a:
            self.findings.append(a["data-finding"] or "")
        if tag == "script" and "src" in a:
            self.scripts_with_src += 1
        if tag == "link":
            self.links += 1


def _check_html(html: str, data: dict) -> None:
    root = ET.fromstring(html.split("\n", 1)[1])  # well-formed XML after the doctype
    assert root.tag.endswith("html")
    p = _Collect()
    p.feed(html)
    p.close()
    ids = [f["id"] for f in data["findings"]]
    assert len(ids) == len(set(ids))
    assert sorted(p.findings) == sorted(ids)
    assert p.scripts_with_src == 0 and p.links == 0          # self-contained, no CDN
    assert "<script>" in html and "sortable" in html        # sortable tables, inline JS
    xml_ids = [e.get("data-finding") for e in root.iter() if e.get("data-finding")]
    assert sorted(xml_ids) == sorted(ids)


def test_html_report_is_well_formed_and_holds_every_json_finding(index_bundle) -> None:
    rep = audit(index_bundle("demo"), "demo")
    data = json.loads(render_json(rep))
    assert data["findings"], "the demo has findings (its traps)"
    _check_html(render_html(rep), data)
    md = render_markdown(rep)
    for u in rep.unmapped:
        assert rep.compact(u.iri) in md


def test_html_report_of_a_broken_mapping_holds_its_mismatches(broken_demo) -> None:
    rep = audit(broken_demo, "broken")
    data = json.loads(render_json(rep))
    assert any(f["kind"] == "template-mismatch" for f in data["findings"])
    _check_html(render_html(rep), data)


def test_fail_under_sets_the_exit_code(cli_env, tmp_path) -> None:
    out = tmp_path / "demo.html"
    low = subprocess.run(NAVQA + ["audit", "--vkg", "demo", "--fail-under", "80",
                                  "--format", "html", "--out", str(out)],
                         env=cli_env, capture_output=True, text=True, timeout=600)
    assert low.returncode == 0, low.stderr[-2000:]
    assert out.is_file() and "80.7 %" in out.read_text(encoding="utf-8")
    high = subprocess.run(NAVQA + ["audit", "--vkg", "demo", "--fail-under", "81"],
                          env=cli_env, capture_output=True, text=True, timeout=600)
    assert high.returncode == 1
    assert "below --fail-under 81" in high.stderr
    assert "# Mapping audit: demo" in high.stdout   # the report is still printed


@pytest.mark.ontop
@pytest.mark.postgres
def test_live_audit_probes_every_active_element_and_shows_its_sql(index_bundle, vkg) -> None:
    """README: the elements populated through reasoning "are not traps: a query on them
    returns data"; every mapped element has rows too; an unmapped one has none."""
    bundle = index_bundle("demo")
    served = vkg("demo")
    rep = audit(bundle, "demo")
    base = served.running.url.rsplit("/sparql", 1)[0]
    ticks: list[tuple[int, int]] = []
    probe_live(rep, bundle, served.endpoint, reformulate_url=f"{base}/ontop/reformulate",
               timeout=60, progress=lambda d, t: ticks.append((d, t)),
               elements=sorted(bundle.active.signature | {R + "Train"}))
    assert rep.live is not None and ticks[-1] == (53, 53)
    status = {e.iri: e.status for e in rep.live}
    assert status[R + "Train"] == "empty"
    assert {i for i, s in status.items() if s != "rows"} == {R + "Train"}
    sql = {e.iri: e.sql or "" for e in rep.live}
    assert '"station"' in sql[R + "Station"] and "SELECT" in sql[R + "Station"]
    assert '"service_stop"' in sql[R + "stopStation"]
    findings = {f["id"]: f for f in rep.findings()}
    assert findings[f"live:{R}Train"]["kind"] == "live-empty"
    _check_html(render_html(rep), json.loads(render_json(rep)))


@pytest.mark.ontop
@pytest.mark.postgres
def test_audit_live_cli_against_a_running_endpoint(vkg, cli_env) -> None:
    served = vkg("demo")
    proc = subprocess.run(NAVQA + ["audit", "--vkg", "demo", "--live", "--endpoint",
                                   served.running.url, "--format", "json"],
                          env=cli_env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rep = json.loads(proc.stdout)
    assert len(rep["live"]) == 52 and all(e["status"] == "rows" for e in rep["live"])
    assert all(e["sql"] for e in rep["live"])
    assert "probing elements" in proc.stderr      # the progress bar


@pytest.mark.npd
def test_npd_audit_headline(index_bundle) -> None:
    b = index_bundle("npd")
    rep = audit(b, "npd")
    st = compute_stats(b.ontology, b.mappings, b.active, b.graph)
    c = rep.coverage
    assert c.declared == st["ontology"]["classes"] + st["ontology"]["object_properties"] + \
        st["ontology"]["data_properties"]
    assert c.unmapped == st["closure"]["unmapped_declared"]
    print(f"\nNPD: coverage {c.coverage} % ({c.mapped}/{c.declared}), "
          f"{c.reasoning} through reasoning, {c.unmapped} unmapped, "
          f"{len(rep.template_mismatches)} template mismatches")
    # NPD's blockLocation objects are npd:block/{} but Block IRIs are npd:block/{}/{}
    assert any(t.prop.endswith("#blockLocation") and t.kind == "orphan"
               for t in rep.template_mismatches)


@pytest.mark.parametrize("name", [pytest.param("bgee", marks=pytest.mark.bgee),
                                  pytest.param("atkis", marks=pytest.mark.atkis)])
def test_bgee_and_atkis_audits_produce_reports(name, index_bundle, cli_env, tmp_path) -> None:
    """Required by the Bgee/ATKIS issue: `navqa audit` runs on both in CI."""
    index_bundle(name)  # build the index once, in-process
    for fmt in ("json", "html", "md"):
        out = tmp_path / f"{name}.{fmt}"
        proc = subprocess.run(NAVQA + ["audit", "--vkg", name, "--format", fmt, "--out",
                                       str(out)], env=cli_env, capture_output=True, text=True,
                              timeout=900)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert out.stat().st_size > 1000
    rep = json.loads((tmp_path / f"{name}.json").read_text(encoding="utf-8"))
    assert rep["vkg"] == name and rep["coverage"]["declared"] > 0
    assert rep["unmapped"], f"{name} has unmapped elements (NaVQA Table 5)"
    _check_html((tmp_path / f"{name}.html").read_text(encoding="utf-8"), rep)

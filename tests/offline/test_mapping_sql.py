"""Tables and columns read by mapping SQL (PostgreSQL identifier rules), on small queries and on
every NPD, Bgee and ATKIS source."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from navqa.model.mapping import MappingAssertion, MappingSet
from navqa.offline.mapping_sql import SqlReferences, annotate_sql, sql_references
from navqa.offline.obda_parser import parse_obda
from navqa.offline.r2rml_parser import parse_r2rml


@pytest.mark.parametrize(
    ("sql", "tables", "columns"),
    [
        (
            'SELECT "wlbName", wlbDepth FROM "Wellbore"',
            ["Wellbore"],
            ["Wellbore.wlbName", "Wellbore.wlbdepth"],
        ),
        ("SELECT stageId FROM Stage WHERE stageId IS NOT NULL", ["stage"], ["stage.stageid"]),
        (
            "SELECT g.geneId, ge.score FROM globalExpression AS ge JOIN gene g ON g.id = ge.gid",
            ["gene", "globalexpression"],
            ["gene.geneid", "gene.id", "globalexpression.gid", "globalexpression.score"],
        ),
        # unqualified column in a join: which table is unknown without the schema
        ("SELECT score FROM a JOIN b ON a.id = b.id", ["a", "b"], ["a.id", "b.id"]),
        ('SELECT "t"."X" x, y FROM "t", u WHERE "t"."K" = u.k', ["t", "u"], ["t.K", "t.X", "u.k"]),
        ("SELECT s.v FROM public.sensor s", ["public.sensor"], ["public.sensor.v"]),
        # columns of a derived table belong to the inner query
        ("SELECT d.n FROM (SELECT name AS n FROM dept) d", ["dept"], ["dept.name"]),
        ("WITH w AS (SELECT id FROM well) SELECT w.id FROM w", ["well"], ["well.id"]),
        ("SELECT id FROM a WHERE id IN (SELECT a_id FROM b)", ["a", "b"], ["a.id", "b.a_id"]),
        # correlated subquery: the outer alias resolves in the enclosing block
        (
            "SELECT ge.x FROM gexp ge WHERE EXISTS (SELECT 1 FROM foo f WHERE f.k = ge.k)",
            ["foo", "gexp"],
            ["foo.k", "gexp.k", "gexp.x"],
        ),
        # unquoted aliases fold like any identifier; quoted ones keep their case
        ('SELECT GE.x, "Q".y FROM t AS ge, "u" "Q"', ["t", "u"], ["t.x", "u.y"]),
        ("SELECT a FROM t UNION SELECT b FROM u", ["t", "u"], ["t.a", "u.b"]),
        # a select-list alias reused in ORDER BY is not a column of the table
        ("SELECT lower(name) AS nm FROM t ORDER BY nm", ["t"], ["t.name"]),
        ("SELECT * FROM building_in_city", ["building_in_city"], []),
        (
            'SELECT child.*, parent."Id" AS "parent_Id" FROM (SELECT a FROM c) AS child '
            'JOIN (SELECT * FROM "P") AS parent ON child.a = parent."Id"',
            ["P", "c"],
            ["c.a"],
        ),
    ],
)
def test_sql_references(sql: str, tables: list[str], columns: list[str]) -> None:
    assert sql_references(sql) == SqlReferences(tuple(tables), tuple(columns), parsed=True)


def test_unparsable_sql_falls_back_to_regex() -> None:
    refs = sql_references('SELEC oops FROM "Mixed" m, lower_t AS x JOIN hr.Emp ON')
    assert refs == SqlReferences(("Mixed", "hr.emp", "lower_t"), (), parsed=False)


def test_annotate_sql_fills_every_assertion_and_logs_fallbacks(caplog) -> None:
    ms = MappingSet(
        (
            MappingAssertion("ok", "SELECT a FROM t", ()),
            MappingAssertion("bad", "SELEC a FROM u", ()),
        ),
        path=Path("x.obda"),
    )
    out = annotate_sql(ms)
    assert [(a.id, a.tables, a.columns) for a in out] == [
        ("ok", ("t",), ("t.a",)),
        ("bad", ("u",), ()),
    ]
    assert ms.assertions[0].tables == ()  # the input is left alone
    assert "mapping 'bad'" in caplog.text


@pytest.mark.npd
def test_npd_sql(dataset_file: Callable[[str, str], Path]) -> None:
    ms = annotate_sql(parse_obda(dataset_file("npd", "mapping")))
    assert all(sql_references(a.source).parsed for a in ms)
    # The dataset README: 69 of the 70 tables are used by the mappings, all but
    # field_description. Quoted names keep their case.
    readme_tables = {
        "wellbore_mud",
        "strat_litho_wellbore",
        "wellbore_formation_top",
        "wellbore_core_photo",
        "licence_licensee_hst",
        "field_production_monthly",
        "seis_acquisition_progress",
        "licence_transfer_hst",
        "wellbore_core",
        "tuf_owner_hst",
        "wellbore_document",
        "wellbore_coordinates",
        "wellbore_npdid_overview",
        "wlbPoint",
        "field_licensee_hst",
        "wellbore_casing_and_lot",
        "seis_acquisition_coordinates_inc_turnarea",
        "licence_petreg_message",
        "wellbore_development_all",
        "bsns_arr_area_licensee_hst",
        "strat_litho_wellbore_core",
        "seis_acquisition",
        "licence_area_poly_hst",
        "prlAreaSplitByBlock",
        "licence_task",
        "licence_oper_hst",
        "field_investment_yearly",
        "licence_petreg_licence_licencee",
        "licence_phase_hst",
        "seaArea",
        "wellbore_exploration_all",
        "prlArea",
        "bsns_arr_area_transfer_hst",
        "field_production_yearly",
        "wellbore_dst",
        "licence",
        "wellbore_shallow_all",
        "wellbore_oil_sample",
        "facility_fixed",
        "fclPoint",
        "licence_petreg_licence",
        "company",
        "licence_petreg_licence_oper",
        "field_production_totalt_NCS_month",
        "apaAreaNet",
        "field_description",
        "discovery",
        "dscArea",
        "company_reserves",
        "bsns_arr_area_area_poly_hst",
        "field_operator_hst",
        "tuf_petreg_message",
        "baaArea",
        "tuf_petreg_licence_licencee",
        "facility_moveable",
        "field_activity_status_hst",
        "fldArea",
        "field_owner_hst",
        "tuf_operator_hst",
        "field_reserves",
        "field",
        "discovery_reserves",
        "seaMultiline",
        "pipLine",
        "bsns_arr_area",
        "field_production_totalt_NCS_year",
        "bsns_arr_area_operator",
        "tuf_petreg_licence_oper",
        "tuf_petreg_licence",
        "apaAreaGross",
    }
    assert len(readme_tables) == 70
    used = set().union(*(a.tables for a in ms))
    assert used == readme_tables - {"field_description"}
    first = ms.assertions[0]
    assert first.columns == (
        "wellbore_coordinates.wlbNpdidWellbore",
        "wellbore_coordinates.wlbNsMin",
    )


@pytest.mark.npd
def test_npd_r2rml_sql_reads_the_same_tables(dataset_file: Callable[[str, str], Path]) -> None:
    obda = annotate_sql(parse_obda(dataset_file("npd", "mapping")))
    r2rml = {a.id: a for a in annotate_sql(parse_r2rml(dataset_file("npd", "mapping-r2rml")))}
    for a in obda:
        assert (a.tables, a.columns) == (r2rml[a.id].tables, r2rml[a.id].columns), a.id


@pytest.mark.bgee
def test_bgee_sql(dataset_file: Callable[[str, str], Path]) -> None:
    ms = annotate_sql(parse_obda(dataset_file("bgee", "mapping")))
    assert set().union(*(a.tables for a in ms)) == {
        "anatentity",
        "gene",
        "globalcond",
        "globalexpression",
        "species",
        "stage",
    }
    stage = ms.assertions[0]  # unquoted mixed case folds to lower case
    assert stage.columns == ("stage.stagedescription", "stage.stageid", "stage.stagename")


@pytest.mark.atkis
def test_atkis_sql_never_crashes(dataset_file: Callable[[str, str], Path]) -> None:
    ms = annotate_sql(parse_obda(dataset_file("atkis", "mapping")))
    assert len(ms) == 168
    assert all(sql_references(a.source).parsed for a in ms)
    assert all(a.tables for a in ms)
    first = ms.assertions[0]  # atkis1.daf001d-reconstructed.obda lines 18-20
    assert first.tables == ("geb01_l",)
    assert first.columns == (
        "geb01_l.agz_1",
        "geb01_l.beginn",
        "geb01_l.geom",
        "geb01_l.land",
        "geb01_l.objart",
        "geb01_l.objid",
        "geb01_l.zus",
    )

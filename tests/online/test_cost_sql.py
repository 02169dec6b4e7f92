"""The cost guard names the columns of an exploding join even through Ontop's subqueries.

The SQL is shaped like Ontop's for the NPD lithostratigraphic units (``SELECT DISTINCT``
over a ``UNION ALL``, each side a subquery with generated column names); the plans are
the shapes PostgreSQL gives for it (a merge join on a subquery column; a nested loop whose
condition sits in a memoized index scan, with the scan's own column unqualified).
"""

from __future__ import annotations

from navqa.online.cost import plan_hotspot
from navqa.online.cost_sql import sql_aliases

SQL = '''SELECT DISTINCT v19."name1m297" AS "name1m297", v19."v1m78" AS "v1m78"
FROM ((SELECT v8."unitName" AS "name1m297", ('http://x/stratum/' || CAST(v7."unit3m78" AS TEXT)
 || '/depth/' || CAST(v7."top1m3" AS TEXT)) AS "v1m78"
FROM (SELECT DISTINCT v5."top1m3" AS "top1m3", v5."unit3m78" AS "unit3m78"
FROM ((SELECT v1."topDepth" AS "top1m3", v1."unitId" AS "unit3m78"
FROM "formation_top" v1
)UNION ALL
(SELECT v3."topDepth" AS "top1m3", v3."unitId" AS "unit3m78"
FROM "litho"."strat_wellbore" v3
)) v5
) v7, "formation_top" v8
WHERE (v7."unit3m78" = v8."unitId" AND 'a, (b) AS "c"' <> v8."unitName")
)UNION ALL
(SELECT v14."unitName" AS "name1m297", ('http://x/core/' || CAST(v13."unitId" AS TEXT)) AS "v1m78"
FROM "public"."strat_core" v13, "formation_top" v14
WHERE v13."unitId" = v14."unitId"
)) v19'''


def test_subquery_columns_resolve_to_the_base_columns_of_every_union_branch() -> None:
    a = sql_aliases(SQL)
    assert a.tables == {"v1": "formation_top", "v3": "litho.strat_wellbore",
                        "v8": "formation_top", "v13": "strat_core", "v14": "formation_top"}
    assert a.resolve("v7", "unit3m78") == {"formation_top.unitId",
                                           "litho.strat_wellbore.unitId"}
    assert a.resolve("v19", "name1m297") == {"formation_top.unitName"}
    # an IRI built from several columns reads all of them; a literal reads none
    assert a.resolve("v19", "v1m78") == {
        "formation_top.unitId", "formation_top.topDepth", "litho.strat_wellbore.unitId",
        "litho.strat_wellbore.topDepth", "strat_core.unitId"}
    assert a.resolve("v7", "nope") == frozenset() and a.resolve("v99", "x") == frozenset()


def _scan(alias: str, table: str, rows: float, **extra: object) -> dict[str, object]:
    return {"Node Type": "Seq Scan", "Relation Name": table, "Alias": alias,
            "Plan Rows": rows, **extra}


MERGE_ON_SUBQUERY = {
    "Node Type": "Merge Join", "Plan Rows": 9.0e7, "Total Cost": 1e9,
    "Merge Cond": '(v8."unitId" = v7."unit3m78")',
    "Plans": [
        {"Node Type": "Sort", "Plan Rows": 26296,
         "Plans": [_scan("v8", "formation_top", 26296)]},
        {"Node Type": "Sort", "Plan Rows": 5259, "Plans": [
            {"Node Type": "Subquery Scan", "Alias": "v7", "Plan Rows": 5259, "Plans": [
                {"Node Type": "Aggregate", "Plan Rows": 5259, "Plans": [
                    {"Node Type": "Append", "Plan Rows": 52592, "Plans": [
                        _scan("v1", "formation_top", 26296),
                        _scan("v3", "strat_wellbore", 26296, Schema="litho")]}]}]}]}]}


def test_a_join_on_a_subquery_column_names_its_base_columns() -> None:
    h = plan_hotspot(MERGE_ON_SUBQUERY, SQL)
    assert h is not None
    assert set(h.columns) == {"formation_top.unitId", "litho.strat_wellbore.unitId"}
    # without the SQL the subquery's side stays unnamed (what the report showed as "?")
    bare = plan_hotspot(MERGE_ON_SUBQUERY)
    assert bare is not None and bare.columns == ("formation_top.unitId",)


NESTED_LOOP_THROUGH_MEMOIZE = {
    "Node Type": "Nested Loop", "Plan Rows": 1.1e6, "Total Cost": 1e7,
    "Plans": [
        _scan("v14", "formation_top", 26296),
        {"Node Type": "Memoize", "Plan Rows": 24, "Plans": [
            {"Node Type": "Index Only Scan", "Relation Name": "strat_core", "Alias": "v13",
             "Plan Rows": 24, "Index Cond": '("unitId" = v14."unitId")'}]}]}


def test_a_nested_loop_condition_in_a_memoized_index_scan_is_read() -> None:
    h = plan_hotspot(NESTED_LOOP_THROUGH_MEMOIZE, SQL)
    assert h is not None
    assert set(h.columns) == {"formation_top.unitId", "strat_core.unitId"}
    assert h.condition == '("unitId" = v14."unitId")'

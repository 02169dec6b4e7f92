"""Render an :class:`~navqa.audits.coverage.AuditReport` as Markdown, HTML or JSON.

The HTML page is self-contained (inline CSS, a few lines of inline JavaScript to sort any
table by clicking its header, no CDN) and well-formed XML, so both browsers and
``xml.etree`` read it. Every finding of the JSON report appears in it as a table row
whose ``data-finding`` attribute is the finding's ``id``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from typing import Any

from navqa.audits.coverage import AuditReport, KindCoverage

__all__ = ["render_html", "render_json", "render_markdown"]

_KIND_LABEL = {"class": "classes", "object_property": "object properties",
               "data_property": "data properties", "total": "total"}


def render_json(report: AuditReport) -> str:
    return json.dumps(report.as_dict(), indent=1, ensure_ascii=False)


# -- markdown -------------------------------------------------------------------------------


def _md_cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _md_table(head: list[str], rows: list[list[object]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(_md_cell(c) for c in r) + " |" for r in rows]
    return out


def _cov_rows(rows: list[KindCoverage], label: Any) -> list[list[object]]:
    return [[label(k), k.declared, k.mapped, k.reasoning, k.unmapped, f"{k.coverage:.1f} %",
             f"{k.active_coverage:.1f} %"] for k in rows]


_COV_HEAD = ["", "declared", "mapped (E0)", "through reasoning", "unmapped", "coverage",
             "active"]


def render_markdown(report: AuditReport) -> str:
    """The report as GitHub-flavoured Markdown."""
    c, r = report.coverage, report
    lines = [f"# Mapping audit: {r.vkg}", "",
             f"**Coverage {c.coverage:.1f} %** — {c.mapped} of {c.declared} declared classes "
             f"and properties are mapped; {c.reasoning} more are populated through reasoning "
             f"({c.active_coverage:.1f} % active); {c.unmapped} are unmapped.", "",
             "Coverage = mapped (E0) classes + object properties + data properties / declared "
             "ones (the figures of `navqa index --stats`).", "", "## By kind", ""]
    lines += _md_table(_COV_HEAD, _cov_rows([*r.by_kind, c], lambda k: _KIND_LABEL[k.name]))
    lines += ["", "## By namespace", ""]
    lines += _md_table(_COV_HEAD, _cov_rows(r.by_namespace, lambda k: f"`{k.name}`"))
    lines += ["", f"## Unmapped elements ({len(r.unmapped)}), most central first", ""]
    lines += _md_table(["rank", "element", "kind", "mapped neighbours", "degree"],
                       [[u.rank, f"`{r.compact(u.iri)}`", u.kind, u.mapped_neighbours,
                         u.degree] for u in r.unmapped])
    lines += ["", f"## Populated through reasoning ({len(r.reasoning)})", ""]
    lines += _md_table(["element", "kind", "via"],
                       [[f"`{r.compact(e.iri)}`", e.kind,
                         ", ".join(f"`{r.compact(v)}`" for v in e.via[:6])]
                        for e in r.reasoning])
    lines += ["", f"## Mapped properties with unmapped domain or range "
              f"({len(r.domain_range_gaps)})", ""]
    lines += _md_table(["property", "role", "class", "class status"],
                       [[f"`{r.compact(g.prop)}`", g.role, f"`{r.compact(g.cls)}`", g.status]
                        for g in r.domain_range_gaps])
    lines += ["", f"## Template mismatches ({len(r.template_mismatches)})", ""]
    if r.template_mismatches:
        lines += _md_table(["property", "position", "template", "kind", "expected", "mappings"],
                           [[f"`{r.compact(t.prop)}`", t.position, f"`{t.template}`", t.kind,
                             ", ".join(t.expected_templates), ", ".join(t.mapping_ids)]
                            for t in r.template_mismatches])
    else:
        lines.append("None: every IRI template of a property can meet the classes it links.")
    lines += ["", f"## Overlapping assertions ({len(r.overlaps)})", ""]
    lines += _md_table(["kind", "atom / SQL", "mappings"],
                       [[o.kind, f"`{o.key}`", ", ".join(o.mapping_ids)] for o in r.overlaps])
    if r.undeclared_mapped:
        lines += ["", f"## Mapped but not declared ({len(r.undeclared_mapped)})", ""]
        lines += [f"- `{r.compact(i)}`" for i in r.undeclared_mapped]
    if r.live is not None:
        bad = [e for e in r.live if e.status != "rows"]
        lines += ["", f"## Live endpoint: {len(r.live)} elements probed, {len(bad)} without "
                  "rows", ""]
        if r.live_note:
            lines += [f"*{r.live_note}*", ""]
        lines += _md_table(["element", "kind", "mapped", "status", "s", "detail"],
                           [[f"`{r.compact(e.iri)}`", e.kind, "yes" if e.mapped else "no",
                             e.status, f"{e.seconds:.2f}", e.error or ""] for e in bad])
        with_sql = [e for e in r.live if e.sql]
        if with_sql:
            lines += ["", "### SQL behind each element", ""]
            for e in with_sql:
                lines += [f"<details><summary><code>{escape(r.compact(e.iri))}</code></summary>",
                          "", "```sql", e.sql or "", "```", "", "</details>"]
    return "\n".join(lines) + "\n"


# -- html ------------------------------------------------------------------------------------

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;
max-width:72rem;padding:0 1rem;color:#1d2430;line-height:1.45}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.2rem;margin-top:2rem;
border-bottom:1px solid #d8dde6;padding-bottom:.2rem}
.headline{font-size:1.1rem;background:#f3f6fa;border-left:4px solid #3b6fb6;padding:.6rem 1rem}
.big{font-size:1.8rem;font-weight:700;color:#3b6fb6}
table{border-collapse:collapse;width:100%;margin:.6rem 0;font-size:.9rem}
th,td{border:1px solid #d8dde6;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#eef2f7;cursor:pointer;user-select:none;white-space:nowrap}
th.sorted-asc::after{content:" \\25B2"}th.sorted-desc::after{content:" \\25BC"}
td.n{text-align:right;font-variant-numeric:tabular-nums}
tr:nth-child(even) td{background:#fafbfd}
code{font-size:.85rem}.sev-error{color:#b3261e;font-weight:600}
.sev-warning{color:#9a6700}.sev-note{color:#57606a}
.bar{display:inline-block;height:.7rem;background:#3b6fb6;vertical-align:middle}
.barbg{display:inline-block;width:6rem;height:.7rem;background:#e3e8ef;margin-right:.4rem}
details pre{background:#f6f8fa;padding:.5rem;overflow:auto;font-size:.8rem}
.muted{color:#57606a}
"""

# Sorting: click a header; numbers compare as numbers (data-v holds the sort key).
_JS = """
//<![CDATA[
document.querySelectorAll("table.sortable th").forEach(function (th, col) {
  th.addEventListener("click", function () {
    var table = th.closest("table"), body = table.tBodies[0];
    var asc = !th.classList.contains("sorted-asc");
    table.querySelectorAll("th").forEach(function (h) {
      h.classList.remove("sorted-asc", "sorted-desc");
    });
    th.classList.add(asc ? "sorted-asc" : "sorted-desc");
    var key = function (tr) {
      var td = tr.children[col], v = td.getAttribute("data-v");
      v = v === null ? td.textContent.trim() : v;
      var n = parseFloat(v);
      return isNaN(n) ? v.toLowerCase() : n;
    };
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a), y = key(b), c = x > y ? 1 : (y > x ? -1 : 0);
      return asc ? c : -c;
    });
    rows.forEach(function (tr) { body.appendChild(tr); });
  });
});
//]]>
"""


def _e(text: object) -> str:
    return escape(str(text), quote=True)


class _Html:
    def __init__(self, report: AuditReport) -> None:
        self.r = report
        self.parts: list[str] = []

    def add(self, text: str) -> None:
        self.parts.append(text)

    def iri(self, iri: str) -> str:
        return f'<code title="{_e(iri)}">{_e(self.r.compact(iri))}</code>'

    def table(self, head: list[str], rows: Sequence[tuple[str | None, list[tuple[str, Any]]]],
              *, empty: str = "None.") -> None:
        """``rows``: (finding id or None, [(cell html, sort value or None)])."""
        if not rows:
            self.add(f'<p class="muted">{_e(empty)}</p>')
            return
        self.add('<table class="sortable"><thead><tr>'
                 + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr></thead><tbody>")
        for fid, cells in rows:
            attr = f' data-finding="{_e(fid)}"' if fid else ""
            tds = []
            for html_, v in cells:
                if isinstance(v, int | float) and not isinstance(v, bool):
                    tds.append(f'<td class="n" data-v="{v}">{html_}</td>')
                else:
                    tds.append(f"<td>{html_}</td>")
            self.add(f"<tr{attr}>" + "".join(tds) + "</tr>")
        self.add("</tbody></table>")


def _bar(pct: float) -> str:
    w = max(0.0, min(100.0, pct)) * 0.06
    return f'<span class="barbg"><span class="bar" style="width:{w:.2f}rem"></span></span>'


def render_html(report: AuditReport) -> str:
    """A self-contained HTML page (well-formed XML) with sortable tables."""
    r, c = report, report.coverage
    h = _Html(r)
    h.add('<!DOCTYPE html>\n<html xmlns="http://www.w3.org/1999/xhtml" lang="en"><head>'
          '<meta charset="utf-8"/><meta name="viewport" content="width=device-width, '
          f'initial-scale=1"/><title>navqa audit: {_e(r.vkg)}</title>'
          f"<style>{_CSS}</style></head><body>")
    h.add(f"<h1>Mapping audit: {_e(r.vkg)}</h1>")
    h.add(f'<p class="headline"><span class="big">{c.coverage:.1f} %</span> coverage — '
          f"{c.mapped} of {c.declared} declared classes and properties are mapped; "
          f"{c.reasoning} more are populated through reasoning ({c.active_coverage:.1f} % "
          f"active); <strong>{c.unmapped} are unmapped</strong>.</p>")
    h.add('<p class="muted">Coverage = mapped (E0) classes + object properties + data '
          "properties / declared ones — the figures of <code>navqa index --stats</code>. "
          "Click a column header to sort.</p>")
    head = ["", "declared", "mapped (E0)", "through reasoning", "unmapped", "coverage",
            "active"]

    def cov_rows(rows: list[KindCoverage], label: Any) -> list[tuple[None, list[Any]]]:
        return [(None, [(label(k), None), (str(k.declared), k.declared),
                        (str(k.mapped), k.mapped), (str(k.reasoning), k.reasoning),
                        (str(k.unmapped), k.unmapped),
                        (f"{_bar(k.coverage)}{k.coverage:.1f} %", k.coverage),
                        (f"{k.active_coverage:.1f} %", k.active_coverage)]) for k in rows]

    h.add("<h2>By kind</h2>")
    h.table(head, cov_rows([*r.by_kind, c], lambda k: _e(_KIND_LABEL[k.name])))
    h.add("<h2>By namespace</h2>")
    h.table(head, cov_rows(r.by_namespace, lambda k: f"<code>{_e(k.name)}</code>"))

    h.add(f"<h2>Unmapped elements ({len(r.unmapped)})</h2><p class=\"muted\">Declared but "
          "not populated, directly or through reasoning: queries on them return nothing. "
          "Ranked by mapped neighbours in the full ontology, then degree.</p>")
    h.table(["rank", "element", "kind", "label", "mapped neighbours", "degree"],
            [(f"unmapped:{u.iri}", [(str(u.rank), u.rank), (h.iri(u.iri), None),
                                    (_e(u.kind), None), (_e(u.label), None),
                                    (str(u.mapped_neighbours), u.mapped_neighbours),
                                    (str(u.degree), u.degree)]) for u in r.unmapped])

    h.add(f"<h2>Populated through reasoning ({len(r.reasoning)})</h2>")
    h.table(["element", "kind", "via"],
            [(f"reasoning:{e.iri}", [(h.iri(e.iri), None), (_e(e.kind), None),
                                     (", ".join(h.iri(v) for v in e.via[:8]), None)])
             for e in r.reasoning])

    h.add(f"<h2>Mapped properties with unmapped domain or range "
          f"({len(r.domain_range_gaps)})</h2>")
    h.table(["property", "role", "class", "class status"],
            [(f"gap:{g.prop}:{g.role}:{g.cls}", [(h.iri(g.prop), None), (_e(g.role), None),
                                                  (h.iri(g.cls), None), (_e(g.status), None)])
             for g in r.domain_range_gaps])

    h.add(f"<h2>Template mismatches ({len(r.template_mismatches)})</h2>")
    h.table(["property", "position", "template", "kind", "expected", "mappings"],
            [(f"template:{t.prop}:{t.position}:{t.template}:{t.kind}",
              [(h.iri(t.prop), None), (_e(t.position), None), (f"<code>{_e(t.template)}</code>",
                                                               None),
               (f'<span class="sev-{"warning" if t.kind == "orphan" else "error"}">'
                f"{_e(t.kind)}</span>", None),
               (_e(", ".join(t.expected_templates)), None), (_e(", ".join(t.mapping_ids)), None)])
             for t in r.template_mismatches],
            empty="None: every IRI template of a property can meet the classes it links.")

    h.add(f"<h2>Overlapping assertions ({len(r.overlaps)})</h2>")
    h.table(["kind", "atom / SQL", "mappings"],
            [(f"overlap:{o.kind}:{o.key}", [(_e(o.kind), None), (f"<code>{_e(o.key)}</code>",
                                                                 None),
                                            (_e(", ".join(o.mapping_ids)), None)])
             for o in r.overlaps])

    if r.undeclared_mapped:
        h.add(f"<h2>Mapped but not declared ({len(r.undeclared_mapped)})</h2>")
        h.table(["element"], [(f"undeclared:{i}", [(h.iri(i), None)])
                              for i in r.undeclared_mapped])

    if r.live is not None:
        bad = [e for e in r.live if e.status != "rows"]
        h.add(f"<h2>Live endpoint ({len(r.live)} elements probed, {len(bad)} without rows)"
              "</h2>")
        if r.live_note:
            h.add(f'<p class="muted">{_e(r.live_note)}</p>')
        rows = []
        for e in r.live:
            fid = None if e.status == "rows" else f"live:{e.iri}"
            sev = "" if e.status == "rows" else (' class="sev-error"' if e.mapped
                                                 and e.status == "empty"
                                                 else ' class="sev-warning"')
            sql = (f"<details><summary>SQL</summary><pre>{_e(e.sql)}</pre></details>"
                   if e.sql else "")
            rows.append((fid, [(h.iri(e.iri), None), (_e(e.kind), None),
                               ("yes" if e.mapped else "no", None),
                               (f"<span{sev}>{_e(e.status)}</span>", None),
                               (f"{e.seconds:.2f}", e.seconds),
                               (_e(e.error or "") + sql, None)]))
        h.table(["element", "kind", "mapped", "status", "seconds", "detail / SQL"], rows)

    h.add(f"<script>{_JS}</script></body></html>")
    return "\n".join(h.parts) + "\n"

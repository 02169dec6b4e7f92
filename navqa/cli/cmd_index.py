"""``navqa index``: build (or load) the offline index of a VKG and report its figures."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from navqa.cli.console import console, err_console, progress_bar
from navqa.cli.inputs import existing_file, vkg_name, writable_dir
from navqa.cli.state import state
from navqa.cli.vkg_options import (
    CatalogOpt,
    LensesOpt,
    MappingOpt,
    OntologyOpt,
    PropertiesOpt,
    VkgOpt,
    resolve,
)
from navqa.errors import IndexError_
from navqa.offline.artifacts import (
    MANIFEST_FILE,
    IndexBundle,
    build_index,
    ensure_index,
    load_index,
)

#: NaVQA (IJCAI 2026) Table 5: ontology search space before and after AOC.
PAPER_TABLE5: dict[str, tuple[int, int]] = {
    "npd": (13_449, 6_688),
    "bgee": (882, 664),
    "atkis": (671, 641),
}

_STAGES = {
    "parse": "parsing ontology and mappings",
    "closure": "closing the active ontology",
    "graph": "building the class graph",
    "describe": "describing elements",
    "embed": "embedding descriptions",
    "save": "writing the index",
}


def index(
    ctx: typer.Context,
    vkg: VkgOpt = None,
    ontology: OntologyOpt = None,
    mapping: MappingOpt = None,
    properties: PropertiesOpt = None,
    catalog: CatalogOpt = None,
    lenses: LensesOpt = None,
    out: Annotated[Path | None, typer.Option(
        "--out", help="Index directory (default: in the cache, keyed by the files' "
        "checksums).", file_okay=False)] = None,
    force: Annotated[bool, typer.Option(
        "--force", help="Rebuild even if the index is up to date.")] = False,
    stats: Annotated[bool, typer.Option(
        "--stats", help="Print the closure, Ta and class-graph figures.")] = False,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print the figures as JSON.")] = False,
    no_llm: Annotated[bool, typer.Option(
        "--no-llm", help="Deterministic descriptions even when an LLM is configured.")] = False,
) -> None:
    """Build the active-ontology index of a VKG (or load it when it is up to date)."""
    from navqa.runtime.project import find_project

    cfg = state(ctx).config
    if vkg is None and ontology is None and mapping is None and find_project() is None:
        raise typer.BadParameter("give --vkg NAME, or -t/--ontology FILE -m/--mapping FILE, "
                                 "or run it in a folder with a navqa.toml (`navqa init`)")
    if (ontology is None) != (mapping is None):
        raise typer.BadParameter("give both -t/--ontology FILE and -m/--mapping FILE")
    if vkg is not None:
        vkg_name(vkg)
    for path, hint in ((ontology, "--ontology"), (mapping, "--mapping"), (catalog, "--catalog")):
        if path is not None:
            existing_file(path, hint)
    if out is not None:
        writable_dir(out, "--out")
    explicit = ontology is not None and out is not None
    if not explicit:
        chosen = resolve(ctx, vkg, ontology, mapping, properties, catalog, lenses)
        cfg = chosen.config

    llm = None
    if not no_llm:
        from navqa.backends.llm_factory import make_llm

        llm = make_llm(cfg)

    t0 = time.perf_counter()
    with _Progress() as progress:
        if not explicit:
            bundle = ensure_index(cfg, chosen.source, llm=llm, force=force, out_dir=out,
                                  progress=progress)
            name = chosen.source.name
        else:
            assert ontology is not None and mapping is not None and out is not None
            bundle = _explicit(cfg, ontology, mapping, catalog, out, force, llm, progress)
            name = bundle.manifest.name or ontology.stem
    elapsed = time.perf_counter() - t0
    built = progress.started

    if as_json:
        console.print_json(json.dumps(_report(bundle, name)))
        return
    if stats:
        _print_stats(bundle, name)
    st = bundle.stats.get("index", {})
    verb = "built" if built else "loaded"
    console.print(
        f"[green]{escape(name)}[/]: index {verb} in {elapsed:.1f} s — "
        f"{st.get('classes', 0)} classes, {st.get('properties', 0)} properties "
        f"({escape(bundle.manifest.embedder_model)}) → {escape(str(bundle.path))}"
    )


def _explicit(cfg: Any, ontology: Path, mapping: Path, catalog: Path | None, out: Path,
              force: bool, llm: Any, progress: Any) -> IndexBundle:
    expected = {"ontology": ontology, "mapping": mapping}
    if catalog is not None:
        expected["catalog"] = catalog
    if not force and (out / MANIFEST_FILE).is_file():
        try:
            return load_index(out, expected_inputs=expected)
        except IndexError_ as e:
            err_console.print(f"[dim]rebuilding: {escape(e.message)}[/]")
    from navqa.backends.embedder_factory import make_embedder

    embedder = make_embedder(cfg.embedder)
    return build_index(cfg, ontology_path=ontology, mapping_path=mapping, catalog=catalog,
                       out_dir=out, embedder=embedder, llm=llm, progress=progress)


class _Progress:
    """Turns ``progress(stage, done, total)`` callbacks into one rich bar per stage."""

    def __init__(self) -> None:
        self.bar = progress_bar()
        self.tasks: dict[str, Any] = {}
        self.started = False

    def __enter__(self) -> _Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.started:
            self.bar.stop()

    def __call__(self, stage: str, done: int, total: int | None) -> None:
        if not self.started:
            self.bar.start()
            self.started = True
        if stage not in self.tasks:
            self.tasks[stage] = self.bar.add_task(_STAGES.get(stage, stage), total=total)
        self.bar.update(self.tasks[stage], completed=done, total=total)


# -- reports ----------------------------------------------------------------------------------


def _report(bundle: IndexBundle, name: str) -> dict[str, Any]:
    m = bundle.manifest
    out: dict[str, Any] = {
        "name": name,
        "path": str(bundle.path),
        "embedder": m.embedder_model,
        "dim": m.dim,
        "created": m.created,
        "navqa_version": m.navqa_version,
        "inputs": {k: {"path": v.path, "sha256": v.sha256} for k, v in m.inputs.items()},
        "stats": m.stats,
    }
    ref = PAPER_TABLE5.get(name)
    if ref is not None:
        out["navqa_table5"] = {"original": ref[0], "pruned": ref[1]}
    return out


_ONTOLOGY_KEYS = {
    "class": "classes",
    "object_property": "object_properties",
    "data_property": "data_properties",
    "annotation_property": "annotation_properties",
}


def _pct(before: int, after: int) -> str:
    return f"{100 * (before - after) / before:.1f}%" if before else "–"


def _print_stats(bundle: IndexBundle, name: str) -> None:
    s = bundle.stats
    o, c, ta, g = s["ontology"], s["closure"], s["ta"], s["class_graph"]

    t = Table(title=f"{escape(name)}: ontology and active signature", title_justify="left")
    t.add_column("kind")
    t.add_column("in T", justify="right")
    t.add_column("|E0| (mapped)", justify="right")
    t.add_column("|E| (active)", justify="right")
    for key, label in (("class", "classes"), ("object_property", "object properties"),
                       ("data_property", "data properties"),
                       ("annotation_property", "annotation properties"),
                       ("other", "undeclared (mapped)")):
        in_t = o.get(_ONTOLOGY_KEYS.get(key, ""), "")
        t.add_row(label, str(in_t), str(c["seeds"].get(key, 0)), str(c["active"].get(key, 0)))
    t.add_row("[bold]total[/]", str(o["classes"] + o["object_properties"] + o["data_properties"]),
              str(c["seeds_total"]), str(c["active_total"]))
    console.print(t)
    steps = ", ".join(f"+{n}" for n in c["added_per_step"])
    console.print(f"closure: {c['steps']} steps ({steps}); {c['unmapped_declared']} declared "
                  f"elements stay out of Ta")

    t = Table(title="Ta: T restricted to the active signature", title_justify="left")
    for col in ("", "T", "Ta", "reduction"):
        t.add_column(col, justify="right" if col else "left")
    t.add_row("triples", f"{ta['full_triples']:,}", f"{ta['active_triples']:,}",
              _pct(ta["full_triples"], ta["active_triples"]))
    t.add_row("logical axioms", f"{ta['full_axioms']:,}", f"{ta['active_axioms']:,}",
              _pct(ta["full_axioms"], ta["active_axioms"]))
    ref = PAPER_TABLE5.get(name)
    if ref is not None:
        t.add_row("NaVQA Table 5", f"{ref[0]:,}", f"{ref[1]:,}", _pct(*ref))
    console.print(t)
    if o.get("imports"):
        console.print(f"note: T includes {len(o['imports'])} followed imports; NaVQA's "
                      "figures are for the main ontology file (see docs/active-ontology.md)")
        main = o.get("main_file")
        if main:
            console.print(f"published ontology file alone: {main['classes']} classes, "
                          f"{main['object_properties']} object properties, "
                          f"{main['data_properties']} data properties, "
                          f"{main['triples']:,} triples")

    owl = s.get("owlready2")
    if owl is not None:
        if "error" in owl:
            console.print(f"[yellow]owlready2 could not read T[/]: {escape(owl['error'])}")
        elif "skipped" in owl:
            console.print(f"owlready2 cross-check skipped: {escape(owl['skipped'])}")
        elif owl["disagreements"] == 0:
            console.print("owlready2 reads T the same way: classes, properties, parents, "
                          "domains, ranges and inverses agree")
        else:
            console.print(f"[yellow]owlready2 reads T differently on {owl['disagreements']} "
                          "facts[/], e.g.:")
            for ex in owl["examples"]:
                console.print(f"  {escape(ex)}")

    t = Table(title="class graph Ga", title_justify="left")
    t.add_column("")
    t.add_column("edges", justify="right")
    t.add_column("object properties typed", justify="right")
    e = g["edges"]
    t.add_row("declared", str(e["declared"]), str(g["declared"]))
    t.add_row("entailed", str(e["entailed"]), str(g["entailed"]))
    t.add_row("mapping-template", str(e["mapping-template"]), str(g["template"]))
    t.add_row("template only", "", str(g["template_only"]))
    t.add_row("none", "", f"{g['untyped']} ({g['untyped_mapped']} mapped)")
    t.add_row("[bold]total[/]", f"{e['total']} ({e['object']} object, {e['data']} data)",
              f"{g['object_properties']} active")
    console.print(t)
    if "timings" in s:
        console.print("timings: " + ", ".join(f"{k[:-2]} {v:.2f} s"
                                              for k, v in s["timings"].items()))

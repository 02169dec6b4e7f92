"""The curated public API of ``import navqa`` is pinned: adding or removing a name is a
deliberate change to this list (and to the README/docs that show it)."""

from __future__ import annotations

import subprocess
import sys

import navqa

EXPECTED = [
    "Answer", "AskResult", "ConfigError", "EndpointError", "HttpSparqlEndpoint", "IndexBundle",
    "NavqaConfig", "NavqaError", "Pipeline", "SelectResult", "__version__", "ensure_index",
    "load_config", "load_index", "serve_vkg",
]


def test_all_is_pinned() -> None:
    assert sorted(navqa.__all__) == sorted(EXPECTED)


def test_every_public_name_resolves_to_its_definition() -> None:
    from navqa.errors import NavqaError
    from navqa.online.pipeline import Pipeline

    for name in navqa.__all__:
        assert getattr(navqa, name) is not None, name
    assert navqa.Pipeline is Pipeline
    assert issubclass(navqa.ConfigError, NavqaError)
    assert callable(navqa.Pipeline.from_index) and callable(navqa.Pipeline.for_vkg)


def test_importing_navqa_loads_no_heavy_dependency() -> None:
    """`navqa --help` must stay fast: the package import pulls in neither torch nor rdflib."""
    code = ("import sys, navqa; heavy = [m for m in ('torch', 'rdflib', 'faiss', "
            "'sentence_transformers') if m in sys.modules]; print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == ""


def test_unknown_attribute_is_an_attribute_error() -> None:
    try:
        navqa.NoSuchThing  # noqa: B018
    except AttributeError as e:
        assert "NoSuchThing" in str(e)
    else:
        raise AssertionError("expected AttributeError")

"""An empty ontology or mapping is an input error, not a VKG with nothing in it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from navqa.errors import MappingParseError, OntologyParseError
from navqa.offline.obda_parser import parse_obda
from navqa.offline.ontology_parser import parse_ontology
from navqa.offline.r2rml_parser import parse_r2rml

OBDA_EMPTY_COLLECTION = ("[PrefixDeclaration]\n:\thttp://e/\n\n"
                         "[MappingDeclaration] @collection [[\n]]\n")
OBDA_ONE = ("[PrefixDeclaration]\n:\thttp://e/\n\n[MappingDeclaration] @collection [[\n"
            "mappingId\tm1\ntarget\t:x/{id} a :C .\nsource\tSELECT id FROM t\n]]\n")


@pytest.mark.parametrize("text", ["", "; only a comment\n", OBDA_EMPTY_COLLECTION],
                         ids=["empty", "comment", "empty-collection"])
def test_obda_without_assertions_is_an_error(tmp_path: Path, text: str) -> None:
    p = tmp_path / "m.obda"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(MappingParseError, match="no mapping assertion") as e:
        parse_obda(p)
    assert e.value.path == p
    # one assertion is enough
    p.write_text(OBDA_ONE, encoding="utf-8")
    assert len(parse_obda(p).assertions) == 1


@pytest.mark.parametrize("text", ["", "@prefix rr: <http://www.w3.org/ns/r2rml#> .\n"],
                         ids=["empty", "prefixes-only"])
def test_r2rml_without_triples_maps_is_an_error(tmp_path: Path, text: str) -> None:
    p = tmp_path / "m.ttl"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(MappingParseError, match="no triples map"):
        parse_r2rml(p)


@pytest.mark.parametrize("text", [
    "", "@prefix owl: <http://www.w3.org/2002/07/owl#> .\n",
    "<http://e/o> a <http://www.w3.org/2002/07/owl#Ontology> .\n"],
    ids=["empty", "prefixes-only", "header-only"])
def test_ontology_without_classes_or_properties_is_an_error(tmp_path: Path, text: str) -> None:
    p = tmp_path / "o.ttl"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(OntologyParseError, match="no class and no property"):
        parse_ontology(p)
    p.write_text("<http://e/C> a <http://www.w3.org/2002/07/owl#Class> .\n", encoding="utf-8")
    assert list(parse_ontology(p).classes) == ["http://e/C"]


def test_cli_rejects_an_empty_mapping_with_exit_2(tmp_path: Path) -> None:
    onto = tmp_path / "o.ttl"
    onto.write_text("<http://e/C> a <http://www.w3.org/2002/07/owl#Class> .\n", encoding="utf-8")
    mapping = tmp_path / "m.obda"
    mapping.write_text("", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "navqa.cli", "audit", "--ontology", str(onto),
                           "--mapping", str(mapping)], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "no mapping assertion" in proc.stderr and "Traceback" not in proc.stderr

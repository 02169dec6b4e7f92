"""Shared pieces of the synthesizer tests: small VKGs indexed in a temporary folder, an
endpoint over an rdflib graph, and a
walk over a query's rdflib algebra (structure is asserted on the parsed query, never on
its text)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import rdflib
from rdflib.plugins.sparql.algebra import translateQuery
from rdflib.plugins.sparql.parser import parseQuery
from rdflib.term import URIRef

from navqa.model.answers import EntityAnswer
from navqa.model.rules import GrammarRule
from navqa.model.terms import IRITerm, LiteralTerm, SelectResult, Term
from navqa.offline.artifacts import build_index
from navqa.online.context import SchemaContext
from navqa.online.synthesis.offline import OfflineSynthesizer

XSD = "http://www.w3.org/2001/XMLSchema#"


def label_synth(ctx: SchemaContext, disabled: frozenset[GrammarRule] = frozenset()
                ) -> OfflineSynthesizer:
    """The offline synthesizer in NaVQA's label convention (an entity answer is its name
    alone), that of the dev split the grammar rules were written on; the default entity
    convention has its own tests (test_entity_answers.py)."""
    return OfflineSynthesizer(ctx, disabled=disabled, entity_answer=EntityAnswer.LABEL)


def algebra(text: str) -> Any:
    """The SPARQL algebra of a query."""
    return translateQuery(parseQuery(text)).algebra


def nodes(alg: Any) -> list[Any]:
    """Every algebra node (CompValue) under ``alg`` (a query's text is parsed first),
    depth first."""
    out: list[Any] = []

    def walk(x: Any) -> None:
        if hasattr(x, "name") and hasattr(x, "items") and not isinstance(x, (str, URIRef)):
            out.append(x)
            for v in x.values():
                walk(v)
        elif isinstance(x, (list, tuple)):
            for v in x:
                walk(v)

    walk(algebra(alg) if isinstance(alg, str) else alg)
    return out


def index_vkg(navqa_config: Any, embedder: Any, folder: Path, name: str, ontology: str,
              mapping: str) -> SchemaContext:
    """A schema context over an ontology and an OBDA mapping, indexed in ``folder``."""
    (folder / f"{name}.ttl").write_text(ontology, encoding="utf-8")
    (folder / f"{name}.obda").write_text(mapping, encoding="utf-8")
    bundle = build_index(navqa_config, ontology_path=folder / f"{name}.ttl",
                         mapping_path=folder / f"{name}.obda", out_dir=folder / "idx",
                         embedder=embedder, name=name)
    return SchemaContext(bundle, embedder)


def books_vkg(ex: str) -> tuple[str, str]:
    """Ontology and mapping of a three-class VKG (books, authors, branches) in ``ex``."""
    ontology = f"""@prefix : <{ex}> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <{XSD}> .
<{ex}> a owl:Ontology .
:Book a owl:Class ; rdfs:label "book" .
:Author a owl:Class ; rdfs:label "author" .
:Branch a owl:Class ; rdfs:label "library branch" .
:writtenBy a owl:ObjectProperty ; rdfs:label "written by" ; rdfs:domain :Book ;
    rdfs:range :Author .
:heldAt a owl:ObjectProperty ; rdfs:label "held at" ; rdfs:domain :Book ; rdfs:range :Branch .
:title a owl:DatatypeProperty ; rdfs:label "title" ; rdfs:domain :Book ; rdfs:range xsd:string .
:pages a owl:DatatypeProperty ; rdfs:label "number of pages" ; rdfs:domain :Book ;
    rdfs:range xsd:integer .
:publicationDate a owl:DatatypeProperty ; rdfs:label "publication date" ; rdfs:domain :Book ;
    rdfs:range xsd:date .
:name a owl:DatatypeProperty ; rdfs:label "name" ; rdfs:range xsd:string .
"""
    mapping = f"""[PrefixDeclaration]
:\t\t{ex}
xsd:\t\t{XSD}

[MappingDeclaration] @collection [[
mappingId\tbook
target\t\t:book/{{id}} a :Book ; :title {{title}}^^xsd:string ; :pages {{pages}}^^xsd:integer ; \
:publicationDate {{published}}^^xsd:date ; :writtenBy :author/{{author_id}} ; \
:heldAt :branch/{{branch_id}} .
source\t\tSELECT id, title, pages, published, author_id, branch_id FROM book

mappingId\tauthor
target\t\t:author/{{id}} a :Author ; :name {{name}}^^xsd:string .
source\t\tSELECT id, name FROM author

mappingId\tbranch
target\t\t:branch/{{id}} a :Branch ; :name {{name}}^^xsd:string .
source\t\tSELECT id, name FROM branch
]]
"""
    return ontology, mapping


class GraphEndpoint:
    """An endpoint answering SELECT queries (value probes) with rdflib over a small graph."""

    def __init__(self, graph: rdflib.Graph, url: str = "memory:graph") -> None:
        self.graph = graph
        self.url = url
        self.queries: list[str] = []

    def select(self, query: str, *, timeout: float | None = None) -> SelectResult:
        self.queries.append(query)
        res = self.graph.query(query)
        names = tuple(str(v) for v in res.vars or ())

        def term(x: object) -> Term | None:
            if isinstance(x, rdflib.URIRef):
                return IRITerm(str(x))
            if isinstance(x, rdflib.Literal):
                return LiteralTerm(str(x), str(x.datatype) if x.datatype else None,
                                   x.language or None)
            return None

        return SelectResult(names, tuple(tuple(term(x) for x in row) for row in res))

"""navqa: natural-language question answering, audits and mapping suggestions over
Virtual Knowledge Graphs (an OWL ontology + OBDA/R2RML mappings, served by Ontop).

The public API, importable from here (loaded lazily, so ``import navqa`` stays cheap)::

    import navqa

    cfg = navqa.load_config()
    with navqa.serve_vkg(cfg, "demo") as running:          # PostgreSQL + Ontop
        pipe = navqa.Pipeline.for_vkg(cfg, running)       # index + backends from config
        answer = pipe.ask("Which stations are managed by Kestrel Metro?")
        print(answer.sparql, answer.result)

``Pipeline.from_index(bundle, endpoint=..., config=...)`` wires a pipeline from an index
you loaded yourself (:func:`load_index`). Everything else lives in the subpackages
(``navqa.offline``, ``navqa.online``, ``navqa.audits``, ``navqa.evaluation``,
``navqa.runtime``, ``navqa.backends``); see the README's layout section.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "Answer": "navqa.model.events",
    "AskResult": "navqa.model.terms",
    "ConfigError": "navqa.errors",
    "EndpointError": "navqa.errors",
    "HttpSparqlEndpoint": "navqa.backends.sparql_http",
    "IndexBundle": "navqa.offline.artifacts",
    "NavqaConfig": "navqa.config",
    "NavqaError": "navqa.errors",
    "Pipeline": "navqa.online.pipeline",
    "SelectResult": "navqa.model.terms",
    "ensure_index": "navqa.offline.artifacts",
    "load_config": "navqa.config",
    "load_index": "navqa.offline.artifacts",
    "serve_vkg": "navqa.runtime.vkg",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> Any:
    """Import public names on first use (PEP 562)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'navqa' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

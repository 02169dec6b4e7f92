"""Answering strategies: the protocols they are written against, and their registry.

A strategy turns one question's :class:`~navqa.online.state.AskState` into events,
using the pipeline's shared stages (mentions and linking, value grounding, expansion,
reranking, synthesis, checks, execution) through the :class:`Stages` protocol. The
pipeline looks strategies up here by name and never imports them; they import only
this module and :mod:`navqa.online.state`, so there is no import cycle between the
pipeline and the strategies.

The built-in strategies register themselves when their module is imported; the one
wiring table is :data:`BUILTIN_MODULES` (name → module), imported on first lookup so
that ``import navqa.online.pipeline`` stays light. A module that fails to import is an
error of the lookup, never a silently missing strategy.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from navqa.errors import ConfigError
from navqa.model.events import Answer, Event

if TYPE_CHECKING:
    from navqa.backends.protocols import LLM, SparqlEndpoint
    from navqa.config import NavqaConfig
    from navqa.online.context import SchemaContext
    from navqa.online.cost import CostGuard
    from navqa.online.expansion import CandidateFilter
    from navqa.online.state import AskState

__all__ = [
    "BUILTIN_MODULES",
    "REPAIR_MODULE",
    "STRATEGIES",
    "EmptyResultRepair",
    "Stages",
    "Strategy",
    "StrategyRegistry",
    "registry",
]


class Stages(Protocol):
    """What a strategy may use of the pipeline (:class:`~navqa.online.pipeline.Pipeline`)."""

    @property
    def ctx(self) -> SchemaContext: ...

    @property
    def endpoint(self) -> SparqlEndpoint: ...

    @property
    def config(self) -> NavqaConfig: ...

    @property
    def llm(self) -> LLM | None: ...

    @property
    def candidate_filter(self) -> CandidateFilter | None: ...

    @property
    def cost_guard(self) -> CostGuard | None: ...

    def full_context(self) -> SchemaContext: ...

    def ask(self, question: str, *, strategy: str = "navqa") -> Answer: ...

    def extract(self, st: AskState) -> Iterator[Event]: ...

    def ground(self, st: AskState) -> Iterator[Event]: ...

    def expand_all(self, st: AskState) -> Iterator[Event]: ...

    def rerank(self, st: AskState) -> Iterator[Event]: ...

    def synthesize(self, st: AskState, feedback: str | None = None) -> Iterator[Event]: ...

    def check(self, st: AskState) -> Iterator[Event]: ...

    def execute(self, st: AskState, *, guard: bool = True) -> Iterator[Event]: ...


Strategy = Callable[["Stages", "AskState"], Iterator[Event]]
"""Answer ``st.question``: yield events, leave the query/result/error in ``st``."""

EmptyResultRepair = Callable[["Stages", "AskState"], Iterator[Event]]
"""Repair ``st.sparql`` whose result came back empty (``pipeline.repair_attempts > 0``)."""

STRATEGIES: tuple[str, ...] = ("navqa", "agent", "cot", "sparqlgen")
"""The built-in strategy names, in the order the CLI lists them."""

BUILTIN_MODULES: dict[str, str] = {
    "navqa": "navqa.online.pipeline",
    "agent": "navqa.online.saga.agent",
    "cot": "navqa.online.baselines",
    "sparqlgen": "navqa.online.baselines",
}
"""Which module registers each built-in strategy (imported on first lookup)."""

REPAIR_MODULE = "navqa.online.saga.repair"
"""The module that registers the empty-result repair."""


@dataclass(frozen=True)
class _Entry:
    run: Strategy


class StrategyRegistry:
    """Strategies by name, and the empty-result repair hook (thread-safe)."""

    def __init__(self, builtins: dict[str, str] | None = None,
                 repair_module: str | None = None) -> None:
        self._builtins = dict(builtins or {})
        self._repair_module = repair_module
        self._strategies: dict[str, _Entry] = {}
        self._repair: EmptyResultRepair | None = None
        self._lock = threading.RLock()

    def register(self, name: str, run: Strategy) -> None:
        """Make ``run`` available as strategy ``name`` (re-registering replaces it)."""
        with self._lock:
            self._strategies[name] = _Entry(run)

    def register_repair(self, repair: EmptyResultRepair) -> None:
        """Set the hook the pipeline calls after an empty result."""
        with self._lock:
            self._repair = repair

    def names(self) -> tuple[str, ...]:
        """Every known name: the built-ins, then any registered later."""
        with self._lock:
            return tuple(dict.fromkeys([*self._builtins, *self._strategies]))

    def get(self, name: str) -> Strategy:
        """The strategy called ``name``.

        Raises:
            ConfigError: no strategy has that name.
        """
        with self._lock:
            module = self._builtins.get(name) if name not in self._strategies else None
        if module is not None:
            importlib.import_module(module)  # registers it; Python's import lock serialises
        with self._lock:
            entry = self._strategies.get(name)
        if entry is None:
            raise ConfigError(f"unknown strategy {name!r}; choose from {', '.join(self.names())}")
        return entry.run

    def repair(self) -> EmptyResultRepair:
        """The empty-result repair.

        Raises:
            ConfigError: none is registered.
        """
        with self._lock:
            module = self._repair_module if self._repair is None else None
        if module is not None:
            importlib.import_module(module)
        with self._lock:
            repair = self._repair
        if repair is None:
            raise ConfigError("no empty-result repair is registered")
        return repair


registry = StrategyRegistry(BUILTIN_MODULES, REPAIR_MODULE)
"""The process-wide registry the pipeline uses by default."""

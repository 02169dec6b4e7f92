"""Build the configured LLM, or none at all (offline mode).

:func:`make_llm` is the only place that turns :class:`~navqa.config.LLMConfig` into a
concrete :class:`~navqa.backends.protocols.LLM`. When the LLM is not enabled it returns
``None``: nothing pretends to be a language model, and each caller runs its own
deterministic implementation instead.
"""

from __future__ import annotations

import logging
from pathlib import Path

from navqa.backends.llm_cache import CachedLLM
from navqa.backends.llm_openai import OpenAIChat
from navqa.backends.protocols import LLM
from navqa.config import NavqaConfig
from navqa.errors import ConfigError

log = logging.getLogger(__name__)

CACHE_FILE_NAME = "llm-cache.sqlite"


def default_cache_path(config: NavqaConfig) -> Path:
    """Where the LLM call cache lives: ``runtime.cache_dir / "llm-cache.sqlite"``."""
    return Path(config.runtime.cache_dir) / CACHE_FILE_NAME


def make_llm(
    config: NavqaConfig, *, cache: bool | None = None, cache_path: Path | None = None
) -> LLM | None:
    """The configured LLM, wrapped in the call cache, or ``None`` in offline mode.

    Args:
        config: The whole configuration (``llm`` and ``runtime.cache_dir`` are read).
        cache: Whether to wrap in :class:`CachedLLM`; ``None`` follows ``llm.cache``
            (the CLI's ``--no-cache`` passes ``False``).
        cache_path: Overrides :func:`default_cache_path`.

    Returns:
        ``None`` when ``config.llm.enabled`` is false, else an :class:`OpenAIChat`
        (possibly inside a :class:`CachedLLM`).

    Raises:
        ConfigError: the provider is ``openai`` but no model is set, or the cache file
            cannot be used.
    """
    llm_cfg = config.llm
    if not llm_cfg.enabled:
        log.debug("LLM disabled (provider=%s): offline mode", llm_cfg.provider)
        return None
    if not llm_cfg.model:
        raise ConfigError(
            "llm.provider is openai but no model is configured",
            hint="set llm.model in navqa.yaml or NAVQA_LLM_MODEL",
        )
    llm = OpenAIChat.from_config(llm_cfg, extra_secrets=config.secrets())
    use_cache = llm_cfg.cache if cache is None else cache
    if not use_cache:
        log.debug("LLM %s without call cache", llm.model)
        return llm
    path = cache_path or default_cache_path(config)
    log.debug("LLM %s with call cache %s", llm.model, path)
    return CachedLLM(llm, path)


__all__ = ["CACHE_FILE_NAME", "default_cache_path", "make_llm"]

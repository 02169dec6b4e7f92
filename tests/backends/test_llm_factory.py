"""make_llm: offline mode, configuration errors, cache wrapping."""

from __future__ import annotations

from pathlib import Path

import pytest

from navqa.backends.llm_cache import CachedLLM
from navqa.backends.llm_factory import default_cache_path, make_llm
from navqa.backends.llm_openai import OpenAIChat
from navqa.config import NavqaConfig, load_config
from navqa.errors import ConfigError
from navqa.model.llm import Message
from navqa.testing.scripted_llm import ScriptedLLMServer


def _config(tmp_path: Path, **llm: object) -> NavqaConfig:
    return NavqaConfig.model_validate({"llm": llm, "runtime": {"cache_dir": str(tmp_path)}})


@pytest.mark.parametrize("llm", [{}, {"provider": "none"}, {"provider": "none", "model": "m"}])
def test_offline_mode_returns_none(tmp_path: Path, llm: dict[str, str]) -> None:
    config = _config(tmp_path, **llm)
    assert not config.llm.enabled
    assert make_llm(config) is None
    assert not (tmp_path / "llm-cache.sqlite").exists()


def test_llm_none_shorthand_from_yaml_is_offline(tmp_path: Path) -> None:
    (tmp_path / "navqa.yaml").write_text("llm: none\n", encoding="utf-8")
    config = load_config(tmp_path / "navqa.yaml", env={"NAVQA_LLM_MODEL": "ignored-model"})
    assert make_llm(config) is None


def test_openai_without_model_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no model") as info:
        make_llm(_config(tmp_path, provider="openai"))
    assert info.value.hint is not None and "NAVQA_LLM_MODEL" in info.value.hint


def test_cache_wrapping_follows_config_and_argument(tmp_path: Path) -> None:
    config = _config(tmp_path, model="m", base_url="http://127.0.0.1:9/v1")
    cached = make_llm(config)
    assert isinstance(cached, CachedLLM) and isinstance(cached.inner, OpenAIChat)
    assert cached.path == default_cache_path(config) == tmp_path / "llm-cache.sqlite"
    assert cached.path.is_file()
    cached.close()
    plain = make_llm(config, cache=False)  # what --no-cache does
    assert isinstance(plain, OpenAIChat)
    plain.close()
    off = make_llm(_config(tmp_path, model="m", base_url="http://127.0.0.1:9/v1", cache=False))
    assert isinstance(off, OpenAIChat)
    off.close()
    forced = make_llm(
        _config(tmp_path, model="m", cache=False), cache=True, cache_path=tmp_path / "other.sqlite"
    )
    assert isinstance(forced, CachedLLM) and forced.path == tmp_path / "other.sqlite"
    forced.close()


@pytest.mark.llm
def test_the_built_llm_talks_to_the_configured_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no stray ./navqa.yaml
    with ScriptedLLMServer(default="pong") as server:
        config = load_config(
            env={
                "NAVQA_LLM_MODEL": "env-model",
                "NAVQA_LLM_BASE_URL": server.base_url,
                "OPENAI_API_KEY": "sk-from-env",
                "NAVQA_CACHE_DIR": str(tmp_path),
            }
        )
        llm = make_llm(config, cache=False)
        assert llm is not None
        try:
            assert llm.call([Message.user("ping")]).text == "pong"
        finally:
            assert isinstance(llm, OpenAIChat)
            llm.close()
        (req,) = server.requests
        assert req.body is not None and req.body["model"] == "env-model"
        assert req.body["temperature"] == config.llm.temperature
        assert req.body["max_tokens"] == config.llm.max_tokens
        assert req.headers["authorization"] == "Bearer sk-from-env"

"""CachedLLM in front of OpenAIChat (real openai client, scripted server)."""

from __future__ import annotations

import multiprocessing
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from navqa.backends.llm_cache import CachedLLM, cache_key
from navqa.backends.llm_openai import OpenAIChat
from navqa.backends.protocols import LLM
from navqa.errors import LLMError
from navqa.model.llm import Message
from navqa.testing.scripted_llm import RecordedRequest, Rule, ScriptedLLMServer

pytestmark = pytest.mark.llm
MakeChat = Callable[..., OpenAIChat]


class Capital(BaseModel):
    country: str
    capital: str


CAPITALS = {"Norway": "Oslo", "Italy": "Rome", "Peru": "Lima", "Chad": "N'Djamena", "Fiji": "Suva"}


def _capital_reply(req: RecordedRequest) -> str:
    country = req.last_user.rsplit(" ", 1)[-1].rstrip("?")
    return f'{{"country": "{country}", "capital": "{CAPITALS[country]}"}}'


def _ask(country: str) -> list[Message]:
    return [Message.system("Answer in JSON."), Message.user(f"What is the capital of {country}?")]


def test_miss_then_hit_gives_identical_results_without_a_request(
    server: ScriptedLLMServer, make_chat: MakeChat, tmp_path: Path
) -> None:
    server.add_rule(Rule(respond=_capital_reply, usage=(40, 12)))
    with CachedLLM(make_chat(), tmp_path / "c.sqlite") as llm:
        assert isinstance(llm, LLM) and llm.model == "test-model"
        first = llm.call(_ask("Peru"), schema=Capital)
        assert not first.cached and len(server.requests) == 1
        second = llm.call(_ask("Peru"), schema=Capital)
        assert second.cached
        assert len(server.requests) == 1  # the hit made no HTTP request
        assert second.text == first.text
        assert second.parsed == first.parsed == Capital(country="Peru", capital="Lima")
        assert second.usage.total_tokens == 0
        stats = llm.stats
        assert (stats.calls, stats.cache_hits, stats.requests) == (2, 1, 1)
        assert stats.tokens_saved == 52
        assert (stats.prompt_tokens, stats.completion_tokens) == (40, 12)


def test_every_part_of_the_key_matters(
    server: ScriptedLLMServer, make_chat: MakeChat, tmp_path: Path
) -> None:
    server.set_default('{"country": "Italy", "capital": "Rome"}')
    with CachedLLM(make_chat(), tmp_path / "c.sqlite") as llm:
        base = _ask("Italy")
        llm.call(base, schema=Capital)
        variants = [
            dict(messages=_ask("Italy") + [Message.user("again")], schema=Capital),
            dict(messages=base, schema=None),
            dict(messages=base, schema=Capital, temperature=0.7),
            dict(messages=base, schema=Capital, max_tokens=12),
        ]
        for i, v in enumerate(variants, start=2):
            msgs = v.pop("messages")
            assert not llm.call(msgs, **v).cached  # type: ignore[arg-type]
            assert len(server.requests) == i
        assert llm.call(base, schema=Capital).cached
        assert len(llm) == 5
    assert cache_key("a", base, None, 0.0, 10) != cache_key("b", base, None, 0.0, 10)


def test_the_cache_persists_across_instances(
    server: ScriptedLLMServer, make_chat: MakeChat, tmp_path: Path
) -> None:
    server.add_rule(Rule(respond=_capital_reply))
    path = tmp_path / "deep" / "dir" / "c.sqlite"
    with CachedLLM(make_chat(), path) as llm:
        llm.call(_ask("Fiji"), schema=Capital)
    with CachedLLM(make_chat(), path) as again:
        r = again.call(_ask("Fiji"), schema=Capital)
    assert r.cached and r.parsed.capital == "Suva"
    assert len(server.requests) == 1


def test_a_hit_that_no_longer_validates_is_a_miss(
    server: ScriptedLLMServer, make_chat: MakeChat, tmp_path: Path
) -> None:
    server.add_rule(Rule(respond=_capital_reply))
    path = tmp_path / "c.sqlite"
    with CachedLLM(make_chat(), path) as llm:
        llm.call(_ask("Chad"), schema=Capital)
        with sqlite3.connect(path) as db:
            db.execute("UPDATE llm_calls SET text = 'garbage'")
        r = llm.call(_ask("Chad"), schema=Capital)
        assert not r.cached and r.parsed.capital == "N'Djamena"
        assert len(server.requests) == 2
        assert llm.call(_ask("Chad"), schema=Capital).cached  # rewritten


def test_failures_are_not_cached(
    server: ScriptedLLMServer, make_chat: MakeChat, tmp_path: Path
) -> None:
    server.set_default("fine")
    server.fail_next(1, status=400, message="bad request")
    with CachedLLM(make_chat(), tmp_path / "c.sqlite") as llm:
        with pytest.raises(LLMError):
            llm.call(_ask("Norway"))
        assert not llm.call(_ask("Norway")).cached
        assert len(server.requests) == 2
        assert llm.stats.failures == 1


def test_threads_share_one_cache_safely(
    server: ScriptedLLMServer, make_chat: MakeChat, tmp_path: Path
) -> None:
    server.add_rule(Rule(respond=_capital_reply))
    countries = sorted(CAPITALS)
    jobs = [countries[i % len(countries)] for i in range(60)]
    with CachedLLM(make_chat(), tmp_path / "c.sqlite") as llm:
        with ThreadPoolExecutor(max_workers=8) as pool:
            results = list(pool.map(lambda c: llm.call(_ask(c), schema=Capital), jobs))
        for country, r in zip(jobs, results, strict=True):
            assert r.parsed == Capital(country=country, capital=CAPITALS[country])
        assert len(llm) == len(countries)
        misses = len(server.requests)
        assert len(countries) <= misses < len(jobs)
        # everything is cached now: a second concurrent pass sends nothing
        with ThreadPoolExecutor(max_workers=8) as pool:
            again = list(pool.map(lambda c: llm.call(_ask(c), schema=Capital), jobs))
        assert all(r.cached for r in again)
        assert len(server.requests) == misses
        assert llm.stats.calls == 2 * len(jobs)


CHILD = textwrap.dedent("""
    import sys
    from pathlib import Path
    from navqa.backends.llm_cache import CachedLLM
    from navqa.backends.llm_openai import OpenAIChat
    from navqa.model.llm import Message

    base_url, path, tag = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    chat = OpenAIChat(model="test-model", base_url=base_url, api_key="sk-x", max_retries=0)
    with CachedLLM(chat, path) as llm:
        for round_ in range(3):
            for i in range(12):
                r = llm.call([Message.user(f"item {i}")])
                assert r.text == f"answer {i}", r.text
    print("ok", tag)
""")


def test_two_processes_share_one_cache_file(server: ScriptedLLMServer, tmp_path: Path) -> None:
    server.add_rule(Rule(respond=lambda r: "answer " + r.last_user.split()[-1]))
    path = tmp_path / "shared.sqlite"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, server.base_url, str(path), tag],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("a", "b")
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
        assert out.startswith("ok")
    with sqlite3.connect(path) as db:
        rows = dict(db.execute("SELECT text, COUNT(*) FROM llm_calls GROUP BY text").fetchall())
    assert rows == {f"answer {i}": 1 for i in range(12)}
    # each process sent at most one request per prompt (later rounds were all hits)
    assert 12 <= len(server.requests) <= 24



class _NoLLM:
    model = "stub"

    def call(self, *args: object, **kwargs: object) -> None:
        raise AssertionError("not called")


def _open_cache(path: str, barrier: Any, results: Any) -> None:
    barrier.wait()
    try:
        CachedLLM(_NoLLM(), Path(path)).close()  # type: ignore[arg-type]
        results.put("ok")
    except Exception as e:  # noqa: BLE001 - reported to the parent
        results.put(repr(e))


def test_processes_opening_a_new_cache_file_together_all_succeed(tmp_path: Path) -> None:
    """Switching a new file to WAL races: SQLite answers "database is locked" at once to
    some of the processes that open it together (about 1 in 20 without the retry, here)."""
    ctx = multiprocessing.get_context("fork")
    failures: list[str] = []
    for round_ in range(25):
        path = tmp_path / f"race{round_}.sqlite"
        barrier, results = ctx.Barrier(4), ctx.Queue()
        procs = [ctx.Process(target=_open_cache, args=(str(path), barrier, results))
                 for _ in range(4)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
        failures += [r for r in (results.get(timeout=10) for _ in procs) if r != "ok"]
    assert failures == []

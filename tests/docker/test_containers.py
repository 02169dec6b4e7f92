"""The Docker path (testcontainers). Skips, with the reason, when no Docker daemon answers."""

from __future__ import annotations

import pytest

from navqa.errors import DockerUnavailableError
from navqa.runtime.containers import docker_status, serve_vkg_in_containers

pytestmark = [pytest.mark.docker]

DOCKER_OK, WHY = docker_status()


def test_without_a_daemon_the_error_says_why(navqa_config) -> None:
    """Runs everywhere: with no daemon, the container path raises a clear, typed error."""
    if DOCKER_OK:
        pytest.skip("a Docker daemon answers here; the failure path cannot be exercised")
    with pytest.raises(DockerUnavailableError) as ei, serve_vkg_in_containers(navqa_config,
                                                                                "demo"):
        pass
    assert "Docker" in str(ei.value)


@pytest.mark.skipif(not DOCKER_OK, reason=f"Docker path not runnable here: {WHY}")
def test_demo_vkg_in_containers_answers(navqa_config) -> None:
    from navqa.backends.sparql_http import HttpSparqlEndpoint

    with serve_vkg_in_containers(navqa_config, "demo") as running:
        ep = HttpSparqlEndpoint(running.url)
        res = ep.select("PREFIX rail: <http://example.org/navqa/rail#> "
                        "SELECT ?n WHERE { ?r a rail:Region ; rail:name ?n }")
        assert len(res.rows) == 5

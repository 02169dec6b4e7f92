"""The TEXT2SPARQL contract: the request the challenge's client sends, the response model
it parses.

The challenge's client package (``text2sparql-client`` 2.1.0 on PyPI) does not install
next to navqa (it pins numpy<2 and fastapi 0.128, and needs ``pytrec-eval``, which does
not build here). Its request is ``requests.get(url=endpoint, params={"dataset": ...,
"question": ...})`` (``text2sparql_client/request.py``), and it reads the body as
``ResponseMessage(**response.json())`` with ``dataset``, ``question`` and ``query``
(``text2sparql_client/models/response.py``). Both are reproduced here as they are.
"""

from __future__ import annotations

import pytest
import requests
from pydantic import BaseModel
from serve_harness import Served

pytestmark = [pytest.mark.postgres, pytest.mark.ontop, pytest.mark.slow]


class ResponseMessage(BaseModel):
    """``text2sparql_client.models.response.ResponseMessage`` (2.1.0), verbatim."""

    dataset: str
    question: str
    query: str
    endpoint: str | None = None


def text2sparql(endpoint: str, dataset: str, question: str) -> requests.Response:
    return requests.get(url=endpoint, params={"dataset": dataset, "question": question},
                        timeout=300)


@pytest.mark.parametrize("path", ["/text2sparql", "/"])
def test_answers_the_clients_request_with_its_response_model(served: Served, path: str) -> None:
    q = "How many lines are there?"
    r = text2sparql(served.url + path, "demo", q)
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    msg = ResponseMessage(**r.json())
    assert msg.dataset == "demo" and msg.question == q
    assert "COUNT" in msg.query and "rail:Line" in msg.query
    assert set(r.json()) == {"dataset", "question", "query"}


def test_a_dataset_iri_ending_in_the_vkg_name_is_the_vkg(served: Served) -> None:
    iri = "https://text2sparql.example.org/2026/demo/"
    r = text2sparql(served.url + "/text2sparql", iri, "How many lines are there?")
    assert r.status_code == 200 and ResponseMessage(**r.json()).dataset == iri


@pytest.mark.parametrize("path", ["/text2sparql", "/"])
def test_unknown_dataset_is_404_and_missing_parameter_is_422(served: Served,
                                                            path: str) -> None:
    assert text2sparql(served.url + path, "dbpedia", "How many lines?").status_code == 404
    assert requests.get(served.url + path, params={"question": "x"},
                        timeout=60).status_code == 422
    assert requests.get(served.url + path, params={"dataset": "demo"},
                        timeout=60).status_code == 422

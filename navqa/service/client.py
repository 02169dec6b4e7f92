"""Asking a running ``navqa serve`` (what ``navqa ask`` does when one serves its VKG)."""

from __future__ import annotations

import os
from typing import Any

from navqa.errors import ServiceError
from navqa.service.registry import ServiceRecord

#: The environment variable holding the bearer token of a service that needs one.
TOKEN_ENV = "NAVQA_SERVE_TOKEN"


def ask_service(rec: ServiceRecord, question: str, *, strategy: str = "navqa",
                llm: str | None = None, timeout: float = 600.0) -> dict[str, Any]:
    """``POST /api/ask`` on the service: ``navqa ask --json``'s object (and more).

    Raises:
        ServiceError: the service refused (busy, auth, bad request) or failed the request.
    """
    import requests

    headers = _auth()
    body: dict[str, Any] = {"question": question, "strategy": strategy, "vkg": rec.name}
    if llm is not None:
        body["llm"] = llm
    try:
        r = requests.post(f"{rec.url}/api/ask", json=body, headers=headers, timeout=timeout)
    except requests.RequestException as e:
        raise ServiceError(f"the navqa service at {rec.url} did not answer: {e}") from e
    if r.status_code != 200:
        try:
            detail = r.json().get("detail", r.text)
        except ValueError:
            detail = r.text
        raise ServiceError(f"the navqa service at {rec.url} answered {r.status_code}: {detail}")
    out: dict[str, Any] = r.json()
    return out


def service_prefixes(rec: ServiceRecord, *, timeout: float = 30.0) -> dict[str, str]:
    """The prefixes the service compacts IRIs with (``/api/vkgs``), for printing tables."""
    import requests

    try:
        r = requests.get(f"{rec.url}/api/vkgs", headers=_auth(), timeout=timeout)
        r.raise_for_status()
    except requests.RequestException as e:
        raise ServiceError(f"the navqa service at {rec.url} did not answer: {e}") from e
    for v in r.json():
        if v.get("name") == rec.name:
            return dict(v.get("prefixes", {}))
    return {}


def _auth() -> dict[str, str]:
    token = os.environ.get(TOKEN_ENV)
    return {"Authorization": f"Bearer {token}"} if token else {}

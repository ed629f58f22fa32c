"""The OpenAPI 3.1 document of the Newsletter API, merged from one ``fragment()`` per module in
:data:`FRAGMENTS` over :mod:`.common`. Served without a key at ``{prefix}/openapi.json`` (it
holds no data) and kept as ``docs/openapi.json``.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import Any

import falcon

from . import common

#: Fragment modules, in the order their paths appear in the document.
FRAGMENTS = ("status", "subscribers", "contact_messages", "issues")


def _merge(target: dict[str, Any], source: dict[str, Any], where: str) -> None:
    for key, value in source.items():
        if key in target and isinstance(target[key], dict) and isinstance(value, dict):
            _merge(target[key], value, f"{where}.{key}")
        elif key in target:
            raise ValueError(f"OpenAPI fragments both define {where}.{key}")
        else:
            target[key] = value


def build_document() -> dict[str, Any]:
    """The whole document (a fresh dict each call)."""
    document = common.base_document()
    for name in FRAGMENTS:
        module = importlib.import_module(f"{__name__}.{name}")
        _merge(document, module.fragment(), "document")
    return document


@cache
def served_document() -> dict[str, Any]:
    """The document as served: built once per process and shared by every app, so building an
    app does not rebuild it. Never modified."""
    return build_document()


class OpenApiResource:
    def __init__(self) -> None:
        self.document = served_document()

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = self.document


def add_routes(app: falcon.App[falcon.Request, falcon.Response], prefix: str) -> None:
    app.add_route(f"{prefix}/openapi.json", OpenApiResource())

"""Walking every route of a built app: the routes come from falcon's router, not a hand list.

:func:`app_routes` reads the compiled router (every ``add_route`` template with its method map)
and the sinks (the list-source and export surfaces, each serving a whole prefix), so a route
added to ``create_app`` is walked without touching the tests. :func:`call` sends one request
through the WSGI interface itself, which lets a test send what ``simulate_request`` cannot: a
body without ``Content-Length`` (what a server hands over for ``Transfer-Encoding: chunked``),
an arbitrary ``SCRIPT_NAME``, a raw undecodable path.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_to_bytes

import falcon
import falcon.testing

#: Sub-paths walked under a sink's prefix besides the ones it names itself (``endpoints``):
#: the list-source dialect's routes, the prefix itself, and paths no surface serves.
SINK_SUBPATHS = (
    "",
    "/",
    "/api/health",
    "/api/campaigns",
    "/api/campaigns/1",
    "/api/campaigns/--1",
    "/api/campaigns/%ZZ",
    "/api/lists",
    "/no-such-endpoint",
)


@dataclass(frozen=True)
class Route:
    """One URI template (or sink prefix) and the methods it is sent."""

    template: str
    methods: tuple[str, ...]
    sink: bool


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


def _router_nodes(nodes: Any) -> Iterator[Any]:
    for node in nodes:
        yield node
        yield from _router_nodes(node.children)


def app_routes(app: falcon.App[Any, Any]) -> list[Route]:
    """Every route of ``app``: each template with every method of its method map (falcon maps
    the ones a resource lacks to its 405 responder), and each sink's prefix with every method."""
    routes = [
        Route(node.uri_template, tuple(sorted(node.method_map)), sink=False)
        for node in _router_nodes(app._router._roots)
        if node.resource is not None
    ]
    for _pattern, sink, _prefixed in app._sinks:
        prefix = getattr(sink, "prefix", None)
        assert isinstance(prefix, str), f"a sink without a prefix to walk: {sink!r}"
        routes.append(Route(prefix, tuple(sorted(falcon.COMBINED_METHODS)), sink=True))
    return routes


def sink_paths(app: falcon.App[Any, Any], prefix: str) -> list[str]:
    """The paths walked under the sink at ``prefix``: its own ``endpoints`` and the usual ones."""
    sink = next(sink for _p, sink, _x in app._sinks if getattr(sink, "prefix", None) == prefix)
    named = tuple(getattr(sink, "endpoints", ()))
    return [prefix + sub for sub in dict.fromkeys(named + SINK_SUBPATHS)]


def call(
    app: falcon.App[Any, Any],
    method: str,
    path: str,
    *,
    query: str = "",
    headers: Mapping[str, str] | None = None,
    body: bytes = b"",
    content_length: bool | str = True,
    root_path: str = "",
) -> Answer:
    """One request through the WSGI interface. ``path`` is sent as the raw (percent-encoded)
    path; ``content_length=False`` leaves ``CONTENT_LENGTH`` out, as a server does for a chunked
    body, and a string sends that very value (``"abc"``, ``"-1"``)."""
    environ = falcon.testing.create_environ(
        path="/",
        query_string=query,
        method=method,
        headers=dict(headers or {}),
        root_path=root_path,
    )
    # PEP 3333 servers put the percent-decoded path, as latin-1 text, in PATH_INFO.
    environ["PATH_INFO"] = unquote_to_bytes(path).decode("latin-1")
    environ["wsgi.input"] = io.BytesIO(body)
    if isinstance(content_length, str):
        environ["CONTENT_LENGTH"] = content_length
    elif content_length:
        environ["CONTENT_LENGTH"] = str(len(body))
    else:
        environ.pop("CONTENT_LENGTH", None)
    start = falcon.testing.StartResponseMock()
    chunks = app(environ, start)
    try:
        data = b"".join(chunks)
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()
    assert start.status is not None
    headers_seen = {name.lower(): value for name, value in start.headers}
    return Answer(int(start.status.split()[0]), headers_seen, data)

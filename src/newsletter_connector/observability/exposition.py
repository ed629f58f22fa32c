"""One scrape: the Prometheus text of this process (or, under gunicorn, of every worker summed
by ``prometheus_client``'s multiprocess mode) plus any extra collectors; and the bearer check
every metrics endpoint shares."""

from __future__ import annotations

import hmac
import os
from collections.abc import Iterable, Iterator
from typing import Any

from .instruments import instruments

#: The text exposition format ``prometheus_client`` writes.
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"


class _Collectors:
    """Several collectors seen as one, for ``generate_latest``."""

    def __init__(self, collectors: Iterable[Any]) -> None:
        self.collectors = list(collectors)

    def collect(self) -> Iterator[Any]:
        for collector in self.collectors:
            yield from collector.collect()


def process_collector() -> Any:
    """What the instruments recorded: summed over every process writing to
    ``$PROMETHEUS_MULTIPROC_DIR`` when it is set, else this process's own figures."""
    directory = os.environ.get(MULTIPROC_ENV)
    if not directory:
        return instruments().registry
    from prometheus_client import CollectorRegistry, multiprocess

    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry, path=directory)  # type: ignore[no-untyped-call]
    return registry


def render(*collectors: Any) -> bytes:
    """The text exposition of ``collectors``."""
    from prometheus_client import generate_latest

    return bytes(generate_latest(_Collectors(collectors)))


def bearer_matches(authorization: str | None, token: str) -> bool:
    """Whether an ``Authorization`` header carries ``Bearer <token>`` (scheme in any case),
    compared in constant time."""
    scheme, _, given = (authorization or "").partition(" ")
    if scheme.lower() != "bearer":
        given = ""
    return hmac.compare_digest(
        given.strip().encode("utf-8", "surrogateescape"), token.encode("utf-8")
    )

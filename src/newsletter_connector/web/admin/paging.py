"""Admin lists paged back by id, newest first: ``?before=<id>`` shows the items older than
that one."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

import falcon

from ...errors import InvalidRequest
from ...service.cursors import MAX_ID
from ..params import decimal_integer


def before_param(req: falcon.Request, item: str) -> int | None:
    """The ``before`` query parameter, or ``None`` when it is absent or blank.

    :raises InvalidRequest: naming ``before``, when it is not a whole number from 1 to the
        largest id; the message calls the id that of ``item`` ("an act").
    """
    before = req.get_param("before")
    if not before:
        return None
    before_id = decimal_integer(before)
    if before_id is None or not 0 < before_id <= MAX_ID:
        message = f"before must be a positive whole number (the id of {item})."
        raise InvalidRequest(message, field="before")
    return before_id


class _Identified(Protocol):
    @property
    def id(self) -> int: ...


Item = TypeVar("Item", bound=_Identified)


@dataclass(frozen=True)
class PageBack(Generic[Item]):
    """One page of a list paged back by id, with the links to the next older page and back
    to the newest (``None`` where there is none)."""

    items: Sequence[Item]
    older_url: str | None
    newest_url: str | None


def page_back(
    fetch: Callable[[int], Sequence[Item]],
    size: int,
    before_id: int | None,
    *,
    url: Callable[[str], str],
    path: str,
) -> PageBack[Item]:
    """Up to ``size`` items from ``fetch(limit)`` (newest first, older than ``before_id``),
    with links made by ``url`` from the list's app ``path``; one more item is asked for than
    shown, to tell whether an older page exists."""
    items = fetch(size + 1)
    shown = items[:size]
    return PageBack(
        shown,
        older_url=url(f"{path}?before={shown[-1].id}") if len(items) > size else None,
        newest_url=url(path) if before_id is not None else None,
    )

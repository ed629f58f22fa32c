"""Acts on the subscribers ticked on a page of the list: unsubscribe, mark bounced or erase
them (after a confirm step; erasing asks for their number to be typed), or export them as CSV
with the chosen columns, whatever their status.

The list's form posts the ticked addresses (``pick``), the list's own query (``filter``: what
the editor was looking at, kept for the audit log) and, for the export, the ``columns``. Each
act does to every address what the single act does (:class:`SubscriberBulkService`) and is
audited once: the number of subscribers as the target, never an address, and the filter and
outcome as the detail.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode

import falcon

from ...errors import InvalidRequest, NotFound
from ...service.subscriber_bulk import MAX_ADDRESSES, BulkOutcome
from ...service.subscriber_export import CSV_COLUMNS, csv_chunks
from .act import ActCall, Done
from .gate import OutsideRole
from .paths import SUBSCRIBERS, SUBSCRIBERS_BULK
from .roles import may_use, why_not
from .subscriber_filter import without_people
from .subscribers import answer_csv

#: act -> (its path's last segment, the question, the button's words, past tense).
ACT_WORDS = {
    "unsubscribe": ("Unsubscribe {n}?", "Unsubscribe them", "unsubscribed"),
    "bounce": ("Mark {n} bounced?", "Mark them bounced", "marked bounced"),
    "erase": ("Erase everything stored about {n}?", "Erase them", "erased"),
}
#: The longest filter kept in an audit entry's detail.
MAX_FILTER_SHOWN = 300


def bulk_path(act: str) -> str:
    """The app path a bulk act's confirm step posts to."""
    return f"{SUBSCRIBERS_BULK}/{act}"


def _picked(call: ActCall) -> list[str]:
    picked = list(dict.fromkeys(value.strip().lower() for value in call.form.get_list("pick")))
    if not picked:
        raise InvalidRequest("tick at least one subscriber first", field="pick")
    if len(picked) > MAX_ADDRESSES:
        raise InvalidRequest(f"at most {MAX_ADDRESSES} subscribers at once", field="pick")
    return picked


def list_url(call: ActCall) -> str:
    """The app path of the list the form was posted from, with its filter."""
    query = call.form.get("filter")
    return f"{SUBSCRIBERS}?{query}" if query else SUBSCRIBERS


def _people(n: int) -> str:
    return f"{n} subscriber{'' if n == 1 else 's'}"


def confirm_bulk(call: ActCall) -> Done:
    """The list's act buttons: the confirm step of the chosen act for the ticked addresses.
    Changes nothing (not audited); ticking none shows the reason on a page of its own; an
    editor choosing to erase gets the 403 page (erasing in bulk is for owners)."""
    act = call.form.get("act")
    if act not in ACT_WORDS:
        raise InvalidRequest("choose unsubscribe, mark bounced or erase", field="act")
    owners_only(call, bulk_path(act))
    picked = _picked(call)
    return Done(None, answer=lambda: _confirm_page(call, act, picked))


def owners_only(call: ActCall, path: str) -> None:
    """:class:`~.gate.OutsideRole` when the admin's role may not use the act at ``path``: its
    confirm step is refused as the act itself is."""
    if not may_use(call.admin.role, path):
        raise OutsideRole(call.admin, why_not(path))


def _confirm_page(call: ActCall, act: str, picked: list[str], *, error: str | None = None) -> None:
    question, button, _done = ACT_WORDS[act]
    call.pages.show(
        call.req,
        call.resp,
        call.admin,
        "subscribers_bulk.html",
        status=falcon.HTTP_400 if error else falcon.HTTP_200,
        current="Subscribers",
        act=act,
        question=question.format(n=_people(len(picked))),
        button=button,
        picked=picked,
        filter=call.form.get("filter")[:2000],
        error=error,
        action_url=call.pages.url(bulk_path(act)),
        cancel_url=call.pages.url(list_url(call)),
    )


def bulk_refused(call: ActCall, problem: InvalidRequest) -> None:
    """The confirm step again (400) with the reason; nothing changed. Without any ticked
    address there is nothing to confirm: the message page says so."""
    act = call.req.path.rsplit("/", 1)[-1]
    if act not in ACT_WORDS or problem.field == "pick":
        nothing_changed(call, problem)
        return
    _confirm_page(call, act, _picked(call), error=problem.message)


def nothing_changed(call: ActCall, problem: InvalidRequest) -> None:
    """A subscribers act refused before its confirm step could be shown: a message page
    (400) with the reason."""
    call.pages.show(
        call.req,
        call.resp,
        call.admin,
        "message.html",
        status=falcon.HTTP_400,
        current="Subscribers",
        title="Nothing was changed",
        message=problem.message,
    )


def apply_bulk(call: ActCall, act: str) -> Done:
    """Do ``act`` to the ticked addresses; erasing needs their number typed
    (``confirm_count``). Audited once: the number as target, the filter and outcome as
    detail."""
    picked = _picked(call)
    if act == "erase" and call.form.get("confirm_count").strip() != str(len(picked)):
        raise InvalidRequest(
            f"type {len(picked)}, the number of subscribers to erase, to confirm",
            field="confirm_count",
        )
    outcome = call.service.subscriber_bulk.apply(act, picked)
    return Done(
        _people(len(picked)),
        flash=_flash(act, outcome),
        redirect_to=list_url(call),
        detail=_detail(call, outcome, act=act),
    )


def _flash(act: str, outcome: BulkOutcome) -> str:
    words = [f"{_people(outcome.changed)} {ACT_WORDS[act][2]}"]
    if outcome.unchanged:
        words.append(f"{outcome.unchanged} already so, unchanged")
    if outcome.missing:
        words.append(f"{outcome.missing} no longer stored")
    return "; ".join(words) + "."


def _detail(call: ActCall, outcome: BulkOutcome | None = None, *, act: str = "") -> str:
    shown = call.form.get("filter")[:2000]
    if act == "erase":
        shown = urlencode(without_people(dict(parse_qsl(shown))))
    shown = shown[:MAX_FILTER_SHOWN] or "none"
    found = (
        f"; {outcome.changed} changed, {outcome.unchanged} unchanged, {outcome.missing} gone"
        if outcome
        else ""
    )
    return f"filter: {shown}{found}"


def chosen_columns(call: ActCall) -> tuple[str, ...]:
    """The form's CSV ``columns``, in :data:`CSV_COLUMNS` order (all when none is chosen);
    :class:`InvalidRequest` names one that is not a column."""
    chosen = set(call.form.get_list("columns"))
    unknown = chosen - set(CSV_COLUMNS)
    if unknown:
        raise InvalidRequest(f"no such column: {sorted(unknown)[0][:40]}", field="columns")
    return tuple(c for c in CSV_COLUMNS if c in chosen) or CSV_COLUMNS


def export_selected(call: ActCall) -> Done:
    """The ticked subscribers as a CSV attachment with the chosen ``columns`` (all when none
    is chosen), whatever their status; an address no longer stored is left out. Audited once,
    as the other bulk acts."""
    picked = _picked(call)
    columns = chosen_columns(call)
    subscribers = call.service.subscribers
    records = []
    for email in picked:
        try:
            records.append(subscribers.get(email))
        except (NotFound, InvalidRequest):
            continue

    return Done(
        _people(len(records)),
        answer=lambda: answer_csv(
            call, "selected", csv_chunks(subscribers, records, columns=columns)
        ),
        detail=f"{_detail(call)}; columns: {' '.join(columns)}"[:500],
    )

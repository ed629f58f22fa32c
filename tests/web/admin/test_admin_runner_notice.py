"""The sync runner's heartbeat and what the admin says of it: every runner's loop records that
a runner is at work (at most a write a minute), and while none has been for three minutes the
pages of work that waits for one (an import, an act on all matching) and the owners' dashboard
say so in words, with who can start it; while one is at work they say it takes the work up."""

from __future__ import annotations

import re
from datetime import timedelta
from html import unescape
from typing import Any

from newsletter_connector.descriptors import EDITOR
from newsletter_connector.service import NewsletterService
from newsletter_connector.service.runner_status import RUNNER_SEEN_SETTING
from newsletter_connector.sync.runner import SyncRunner
from tests.support.admin import PASSWORD, get_page, sign_in, submit
from tests.web.admin.test_admin_subscriber_jobs import FILTER, people  # noqa: F401

QUIET = "No sync runner has been at work"
TAKES_IT_UP = "The sync runner takes it up within seconds"


def _text(page: Any) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", page.text)).split())


def _job_page(client: Any, session: str) -> str:
    fields = {"filter": FILTER, "expected": "3", "exact": "yes"}
    started = submit(client, "/admin/subscribers/all/bounce", session, fields, form="/admin")
    assert started.status_code == 303, started.text[:300]
    path = started.headers["location"].split("/admin/", 1)[1]
    return _text(get_page(client, f"/admin/{path}", session))


def test_a_runners_loop_leaves_a_heartbeat_at_most_once_a_minute(
    service: Any, now: list[Any]
) -> None:
    assert service.runner_status.seen().last_seen is None
    assert service.runner_status.seen().quiet
    runner = SyncRunner(service)
    runner.run_once()
    first = now[0]
    assert service.runner_status.seen().last_seen == first
    now[0] = first + timedelta(seconds=50)
    runner.run_once()  # within the minute: nothing written
    assert service.runner_status.seen().last_seen == first
    other_process = NewsletterService.build(
        service.settings, storage=service.storage, clock=lambda: now[0]
    )
    SyncRunner(other_process).run_once()  # another process's runner: its first beat is written
    assert service.runner_status.seen().last_seen == now[0]
    now[0] += timedelta(minutes=3)
    assert not service.runner_status.seen().quiet  # 3½ minutes: not yet past QUIET_AFTER
    now[0] += timedelta(seconds=31)
    assert service.runner_status.seen().quiet


def test_a_job_page_says_when_no_runner_is_at_work_and_who_can_start_one(
    client: Any,
    service: Any,
    session: str,
    now: list[Any],
    people: None,  # noqa: F811
) -> None:
    text = _job_page(client, session)
    assert f"{QUIET} yet." in text and "newsletter-connector sync" in text
    assert TAKES_IT_UP not in text

    service.runner_status.beat()
    text = _job_page(client, session)
    assert TAKES_IT_UP in text and QUIET not in text

    now[0] += timedelta(minutes=4)
    seen_at = (now[0] - timedelta(minutes=4)).strftime("%Y-%m-%d %H:%M UTC")
    assert f"{QUIET} since {seen_at}." in _job_page(client, session)


def test_an_import_page_says_when_no_runner_is_at_work(
    client: Any, service: Any, session: str
) -> None:
    from tests.web.admin.test_admin_import_lines import CONSENT
    from tests.web.admin.test_admin_imports import _choose, _job_id, _upload

    job_id = _job_id(_upload(client, session, "list.csv", b"email\nann@example.org\n"))
    assert QUIET not in _text(get_page(client, f"/admin/imports/{job_id}", session))  # no work
    _choose(client, session, job_id, **CONSENT)
    waiting = _text(get_page(client, f"/admin/imports/{job_id}", session))
    assert f"{QUIET} yet." in waiting
    service.runner_status.beat()
    assert TAKES_IT_UP in _text(get_page(client, f"/admin/imports/{job_id}", session))


def test_the_dashboard_tells_owners_not_editors(client: Any, service: Any, session: str) -> None:
    assert f"{QUIET} yet." in _text(get_page(client, "/admin", session))
    service.admin_access.create_user("eve", PASSWORD, role=EDITOR)
    assert QUIET not in _text(get_page(client, "/admin", sign_in(client, "eve")))
    service.runner_status.beat()
    assert QUIET not in _text(get_page(client, "/admin", session))


def test_a_heartbeat_that_does_not_read_as_a_time_is_no_runner(service: Any) -> None:
    with service.storage.transaction() as uow:
        uow.settings.put(RUNNER_SEEN_SETTING, "not a time", at=service.context.clock())
    assert service.runner_status.seen().last_seen is None
    assert service.runner_status.seen().quiet

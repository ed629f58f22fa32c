"""The user docs' commands, run as a newcomer runs them: each page's shell blocks in order, in
a fresh ``bash -euo pipefail`` in an empty folder, with only the settings the docs tell the
reader to set (a SQLite file of the folder's own, the public address, the site secret), against
a real ``newsletter-connector serve`` on a free port where a block needs a running site. The
docs' public address (``https://news.example.org/newsletter``) is swapped for that server's,
and each printed answer or output the docs show is compared with what the commands print.

One server and one database serve the whole module (one start instead of one per page); the
tests run the pages in the order a reader meets them, each making the rows it needs (the
README's platform connection is a fixture of the tests that need it)."""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
import tomllib
import yaml

from newsletter_connector import NewsletterService, Settings
from newsletter_connector.observability.instruments import instruments
from newsletter_connector.plugin_manager import ENTRY_POINT_GROUP
from newsletter_connector.plugins.sql_store.migrate import head_revision
from tests.support.doc_shell import PATH, Shell, comment_lines, replaced, without_comments
from tests.support.docblocks import docblock, same_shape
from tests.support.paths import ROOT
from tests.support.waiting import free_port

# Runs the command line and serve in subprocesses, on a SQLite file of its own
pytestmark = [pytest.mark.system, pytest.mark.database_independent]

#: The public address the pages use, and the other spelling some of them use.
PUBLIC = "https://news.example.org/newsletter"
PUBLIC_SHORT = "https://example.org/newsletter"
SECRET = "a-site-secret-for-the-docs-newcomer-0123456789"
METRICS_TOKEN = "metrics-token-for-the-docs-0123"
SHARED_TOKEN = "shared-token-for-the-docs-platform-0123"


@dataclass
class Site:
    shell: Shell
    base: str
    key: str
    log: Path

    def served(self, block: str) -> str:
        """``block`` with the public address, in either spelling, pointed at the server."""
        return block.replace(PUBLIC, self.base).replace(PUBLIC_SHORT, self.base)

    def service(self) -> NewsletterService:
        """The site's service in this process, for the rows no doc block makes (a failed
        batch, a contact message)."""
        return NewsletterService.build(
            Settings.load(
                database_url=self.shell.env["NEWSLETTER_DATABASE_URL"],
                base_url=PUBLIC,
                site_secret=SECRET,
            )
        )

    def subscribe(self, email: str) -> None:
        """A confirmed subscriber, through the API as the platform signs one up."""
        consent = {"source": "docs test", "collected_at": "2025-03-01T10:00:00Z"}
        answer = httpx.post(
            f"{self.base}/api/newsletter/v1/subscribers",
            json={"email": email, "consent": consent},
            headers={"Authorization": f"Bearer {self.key}"},
        )
        assert answer.status_code in (200, 201), answer.text


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    folder = tmp_path_factory.mktemp("user-docs")
    shell = Shell(
        folder,
        NEWSLETTER_CONFIG="",
        NEWSLETTER_DATABASE_URL=f"sqlite:///{folder / 'newsletter.db'}",
        NEWSLETTER_BASE_URL=PUBLIC,
        NEWSLETTER_SITE_SECRET=SECRET,
        NEWSLETTER_METRICS_TOKEN=METRICS_TOKEN,
    )
    upgraded = shell.run(docblock("mounting-db-upgrade"))
    assert upgraded.stdout == f"database created (schema revision {head_revision()})\n"
    # The key the Newsletter API page's examples use, made as its first block says.
    (made_with,) = re.findall(r"# from: (.+)$", docblock("newsletter-api-variables"), re.M)
    key = shell.run(made_with).stdout.strip()
    port = free_port()
    serve = f"newsletter-connector serve --bind 127.0.0.1:{port} --workers 1"
    # JSON logs: the operations page's log sample is compared with this server's lines.
    shell.env["NEWSLETTER_LOG_FORMAT"] = "json"
    with shell.running(serve, probe_url=f"http://127.0.0.1:{port}/healthz") as log:
        del shell.env["NEWSLETTER_LOG_FORMAT"]
        yield Site(shell, f"http://127.0.0.1:{port}", key, log)


def answer(output: str) -> Any:
    return json.loads(output)


# -- Getting started, the Newsletter API page ------------------------------------------------


def test_the_api_variables_and_the_status_calls(site: Site) -> None:
    variables = replaced(docblock("newsletter-api-variables"), {"nlk_...": site.key})
    status = site.shell.run(
        site.served(variables) + without_comments(docblock("newsletter-api-curl:1"))
    )
    assert answer(status.stdout) == answer(docblock("newsletter-api-answer:1"))

    # Getting started's check of its key "crm", made as its step 3 makes it.
    crm = site.shell.run("newsletter-connector keys create --label crm").stdout.strip()
    block = docblock("start-status-curl")
    printed = site.shell.run(site.served(without_comments(block)), KEY=crm)
    (shown,) = comment_lines(block)
    assert answer(printed.stdout) == answer(shown)


# -- The admin area ----------------------------------------------------------------------------


def test_the_admin_users_commands(site: Site) -> None:
    assert site.shell.run("newsletter-connector admin list-users").stdout == "no admin users\n"
    assert httpx.get(site.base + "/admin").status_code == 404  # hidden until its first user
    # Each create-user asks for a password; the reader types one, here they come piped.
    result = site.shell.run(
        docblock("admin-users"), stdin="ada-password-for-docs\neve-password-for-docs\n"
    )
    lines = result.stdout.splitlines()
    assert lines[:3] == [
        "admin user 'ada' created (owner)",
        "admin user 'eve' created (editor)",
        "admin user 'eve' is now an owner",
    ]
    assert [line.split("\t")[:2] for line in lines[3:5]] == [["ada", "owner"], ["eve", "owner"]]
    assert lines[5:] == ["admin user 'eve' deleted"]
    # "As soon as one user exists, {base_url}/admin shows the sign-in page."
    sent = httpx.get(site.base + "/admin")
    assert sent.is_redirect, sent.status_code
    login = sent.headers["location"]
    assert login.startswith(PUBLIC + "/admin"), login
    page = httpx.get(site.served(login))
    assert page.status_code == 200
    assert 'type="password"' in page.text


# -- README, delivery, operations: the platform, the outbox, the runner ------------------------


def run_lines(site: Site, block: str, **variables: str) -> list[str]:
    """Run ``block`` a line at a time (a long-running one, marked so by its comment, is
    started, seen running and stopped); what each line printed."""
    printed = []
    for line in without_comments(block).splitlines():
        if not line.strip():
            continue
        if "long-running" in line or re.search(r"^newsletter-connector sync\s*(#|$)", line):
            with site.shell.running(line, says="sync runner started") as log:
                pass
            printed.append(log.read_text())
        else:
            result = site.shell.run(line, check=False, **variables)
            assert result.returncode == 0, f"{line}\n{result.stdout}{result.stderr}"
            printed.append(result.stdout)
    return printed


@pytest.fixture(scope="module")
def platform(site: Site) -> list[str]:
    """The README's platform commands, run once for the tests that need the connection they
    make: what each printed."""
    return run_lines(site, docblock("readme-platform"), SHARED_TOKEN=SHARED_TOKEN)


def test_the_readme_platform_commands_and_the_runner(site: Site, platform: list[str]) -> None:
    connect, runner, status = platform
    assert connect == "connection active: https://platform.example via events\n"
    assert "sync runner started" in runner
    assert "platform connection: https://platform.example via events" in status

    # Delivery's two ways of running it: nothing is queued yet, so --once delivers nothing.
    loop, once = run_lines(site, docblock("delivery-sync"))
    assert "sync runner started" in loop
    assert "delivered 0 event(s) in 0 batch(es); 0 batch(es) failed" in once


def test_the_operator_by_hand_then_the_platform_feedback(site: Site, platform: list[str]) -> None:
    site.subscribe("ann@example.org")
    show, bounce, unsubscribe = run_lines(site, docblock("delivery-by-hand"))
    assert "ann@example.org" in show and "confirmed" in show
    assert "bounced" in bounce
    assert "unsubscribed" in unsubscribe

    # The platform reports ann (back as a confirmed reader) and bob; cy is no subscriber.
    site.shell.run("newsletter-connector erase ann@example.org")
    site.subscribe("ann@example.org")
    site.subscribe("bob@example.org")
    (site.shell.folder / "feedback.json").write_text(docblock("feedback-request"))
    posted = site.shell.run(
        site.served(docblock("delivery-feedback-curl")), CONNECTION_TOKEN=SHARED_TOKEN
    )
    assert answer(posted.stdout) == answer(docblock("delivery-feedback-answer"))


def fail_a_batch(site: Site) -> str:
    """Mark the oldest due batch failed, as 20 refused attempts leave it."""
    service = site.service()
    try:
        now = datetime.now(UTC).replace(tzinfo=None)
        with service.storage.transaction() as uow:
            (batch,) = uow.outbox.claim_batches(
                now=now, lease_until=now + timedelta(minutes=1), batch_size=2, max_batches=1
            )
            uow.outbox.mark_failed(batch.id, error="HTTP 503 from POST /v1/events", at=now)
        return str(batch.id)
    finally:
        service.close()


def test_the_outbox_commands_the_cron_line_and_the_runner_log(
    site: Site, platform: list[str]
) -> None:
    for reader in ("dan@example.org", "eve@example.org"):  # their events wait for the platform
        site.subscribe(reader)
    first, second = fail_a_batch(site), fail_a_batch(site)
    block = replaced(docblock("delivery-outbox"), {"BATCH_ID": first})
    status, failed, replay, replay_all, retry_now, metrics = run_lines(site, block)
    assert "failed: 2 batch(es)" in status
    assert first in failed and second in failed
    assert replay == replay_all == "replayed 1 batch(es); they go out on the next sync\n"
    assert "due now" in retry_now
    assert "newsletter_outbox_failed_events 0.0" in metrics

    status, failed, metrics = run_lines(site, docblock("ops-outbox"))
    assert "platform connection: https://platform.example via events" in status
    assert failed == "no failed batches\n"
    assert "newsletter_outbox_undelivered_events" in metrics

    # node_exporter's textfile folder is the host's; the cron line's command, not its schedule.
    textfile = site.shell.folder / "textfile"
    textfile.mkdir()
    cron = docblock("delivery-outbox-cron")
    assert cron.startswith("* * * * * ")
    site.shell.run(
        cron.removeprefix("* * * * * ").replace("/var/lib/node_exporter/textfile", str(textfile))
    )
    assert [path.name for path in textfile.iterdir()] == ["newsletter.prom"]
    assert "newsletter_outbox_undelivered_events" in (textfile / "newsletter.prom").read_text()

    # The runner's warning, in the operations page's JSON log shape: platform.example is
    # unreachable, so the due batches fail this attempt.
    once = site.shell.run(
        "newsletter-connector sync --once", check=False, NEWSLETTER_LOG_FORMAT="json"
    )
    assert once.returncode == 1, once.stdout + once.stderr
    documented = [json.loads(line) for line in docblock("ops-json-logs").splitlines()]
    runner = [
        json.loads(line)
        for line in once.stderr.splitlines()
        if line.startswith("{") and json.loads(line)["logger"] == documented[1]["logger"]
    ]
    warning = next(record for record in runner if record["level"] == "WARNING")
    same_shape(documented[1], warning, "runner log line")
    pattern = (
        r"batch \S+ attempt \d+ failed \(.+\); retry at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?"
    )
    assert re.fullmatch(pattern, warning["message"]), warning["message"]
    assert re.fullmatch(pattern, documented[1]["message"]), documented[1]["message"]


def test_the_access_log_line_is_the_documented_shape(site: Site) -> None:
    httpx.get(site.base + "/confirm/a-token-of-the-docs")
    documented = json.loads(docblock("ops-json-logs").splitlines()[0])
    records = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # the access log line is written after the answer
        records = [
            json.loads(line)
            for line in site.log.read_text().splitlines()
            if line.startswith("{") and '"gunicorn.access"' in line and "/confirm/" in line
        ]
        if records:
            break
        time.sleep(0.1)
    (line,) = records
    same_shape(documented, line, "access log line")
    assert line["path"] == documented["path"] == "/confirm/[redacted]"
    assert "a-token-of-the-docs" not in site.log.read_text()


def test_erasing_an_address_prints_what_the_page_shows(site: Site) -> None:
    site.subscribe("reader@example.org")
    service = site.service()
    try:
        for text in ("Could you cover hearing aids?", "And bus routes?"):
            service.messages.record("reader@example.org", None, text)
    finally:
        service.close()
    printed = site.shell.run(docblock("ops-erase"))
    assert printed.stdout == docblock("ops-erase-output")


# -- Operations: probes, metrics and alerts ----------------------------------------------------


def test_the_probes_the_scrape_config_and_the_alert_rules(site: Site) -> None:
    (web_unit_port,) = re.findall(r"--bind 127\.0\.0\.1:(\d+)", docblock("ops-systemd-web"))
    probes = yaml.safe_load(docblock("ops-probes"))
    for probe in probes.values():
        path, port = probe["httpGet"]["path"], probe["httpGet"]["port"]
        assert str(port) == web_unit_port  # the port serve listens on in the pod
        assert httpx.get(site.base + path).status_code == 200, path  # serve's own paths

    scrape = {
        job["job_name"]: job
        for job in yaml.safe_load(docblock("ops-prometheus-scrape"))["scrape_configs"]
    }
    mount = urlsplit(PUBLIC).path
    web_path = scrape["newsletter"]["metrics_path"]
    assert web_path.startswith(mount + "/")  # through the proxy that serves base_url
    bearer = {"Authorization": f"Bearer {METRICS_TOKEN}"}
    web = httpx.get(site.base + web_path.removeprefix(mount), headers=bearer)
    assert web.status_code == 200, web.text

    runner_port = free_port()
    target = scrape["newsletter-sync"]["static_configs"][0]["targets"][0]
    assert target.endswith(":9101")
    runner_path = scrape["newsletter-sync"]["metrics_path"]
    with site.shell.running(
        f"newsletter-connector sync --metrics-bind 127.0.0.1:{runner_port}",
        probe_url=f"http://127.0.0.1:{runner_port}{runner_path}",
    ):
        runner = httpx.get(f"http://127.0.0.1:{runner_port}{runner_path}", headers=bearer)
    assert runner.status_code == 200, runner.text

    # Every metric a rule names is a family the service defines (the web workers' and the
    # runner's instruments; a labelled counter nothing has counted yet is not exported) or
    # one the app exports (the outbox figures), with the labels the rule reads.
    exported = web.text + runner.text
    assert "newsletter_http_requests_total{" in web.text
    families = {family(name) for name in re.findall(r"^# TYPE (\S+) ", exported, re.M)}
    defined = {
        metric._name: metric
        for metric in vars(instruments()).values()
        if hasattr(metric, "_labelnames")
    }
    rules = yaml.safe_load(docblock("ops-prometheus-rules"))["groups"][0]["rules"]
    for rule in rules:
        for metric, selector in re.findall(r"(newsletter_\w+)(\{[^}]*\})?", rule["expr"]):
            assert family(metric) in families | set(defined), (rule["alert"], metric)
            for label, value in re.findall(r'(\w+)!?="([^"]*)"', selector):
                instrument = defined[family(metric)]
                assert label in instrument._labelnames, (rule["alert"], label)
                if label == "status_class":
                    assert re.fullmatch(r"[1-5]xx", value), value
                else:  # a result its help names
                    assert value in instrument._documentation, (rule["alert"], value)


def family(sample: str) -> str:
    """The metric family a sample or series name belongs to."""
    return re.sub(r"_(total|bucket|sum|count)$", "", sample)


# -- List source, issues, analytics ------------------------------------------------------------


def test_the_list_source_commands_and_requests(site: Site) -> None:
    listsource_key = "a-list-source-key-for-the-docs"
    site.shell.run(
        without_comments(docblock("listsource-set-credentials")), stdin=listsource_key + "\n"
    )
    block = site.served(docblock("listsource-curl")).replace("YOUR-KEY", listsource_key)
    health, campaigns = (
        site.shell.run(line).stdout
        for line in without_comments(block).replace("\\\n", " ").splitlines()
        if line.strip()
    )
    assert answer(health) == answer(comment_lines(docblock("listsource-curl"))[0])
    assert isinstance(answer(campaigns)["data"]["results"], list)

    show = docblock("listsource-show")
    (shown,) = comment_lines(show)
    printed = site.shell.run(without_comments(show)).stdout.strip()
    assert re.fullmatch(re.escape(shown).replace(re.escape("(...)"), r"\(.+\)"), printed), printed
    site.shell.run(docblock("listsource-disable"))
    assert "disabled" in site.shell.run(without_comments(show)).stdout
    assert httpx.get(f"{site.base}/api/listsource/api/health").status_code == 404


def test_the_digest_commands_and_reading_the_issues(site: Site) -> None:
    # The content plugin of the issues page, installed as its entry point says: a
    # distribution's metadata beside the module, on the shell's PYTHONPATH.
    plugins = site.shell.folder / "plugins"
    (plugins / "my_site").mkdir(parents=True)
    (plugins / "my_site" / "__init__.py").write_text("")
    (plugins / "my_site" / "newsletter_content.py").write_text(docblock("content-plugin"))
    ((group, entries),) = tomllib.loads(docblock("issues-entry-point"))["project"][
        "entry-points"
    ].items()
    assert group == ENTRY_POINT_GROUP
    dist = plugins / "my_site-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: my-site\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        f"[{group}]\n" + "".join(f"{name} = {value}\n" for name, value in entries.items())
    )
    # The content object the plugin returns, as the file the manual runs read.
    shutil.copy(
        ROOT / "examples" / "standalone" / "sample-content.json", site.shell.folder / "edition.json"
    )
    daily, _manual, test = (
        site.shell.run(line, PYTHONPATH=str(plugins))
        for line in without_comments(docblock("issues-digest")).splitlines()
    )
    assert "daily" in daily.stdout + daily.stderr
    assert (site.shell.folder / "edition.html").read_text().startswith("<!")
    assert "[TEST]" in test.stdout + test.stderr

    latest, listed = (
        site.shell.run(line, KEY=site.key).stdout
        for line in site.served(docblock("issues-curl")).splitlines()
    )
    assert answer(latest)["kind"] == "test"
    assert "html" in answer(latest)
    assert [issue["kind"] for issue in answer(listed)["data"]] == ["test", "manual", "daily"]
    assert all("html" in issue for issue in answer(listed)["data"])


def test_the_analytics_script_tag_loads_the_script(site: Site) -> None:
    (src,) = re.findall(r'src="([^"]+)"', docblock("analytics-script-tag"))
    script = httpx.get(site.served(src))
    assert script.status_code == 200
    assert "javascript" in script.headers["content-type"]


# -- Pages that need no running site ---------------------------------------------------------


def test_the_import_trial_database_and_a_mailman_list(tmp_path: Path) -> None:
    """The importing page's throwaway database (in this test's folder rather than /tmp), then
    Mailman's members command, here a stand-in printing the example of its output, and the
    pending import it refuses until --yes."""
    tools = tmp_path / "bin"
    tools.mkdir()
    mailman = tools / "mailman"
    members = ROOT / "examples" / "imports" / "mailman-members.txt"
    mailman.write_text(
        f'#!/bin/sh\n[ "$1 $2" = "members news@lists.example.org" ] || exit 2\nexec cat {members}\n'
    )
    mailman.chmod(0o755)
    shell = Shell(tmp_path, PATH=f"{tools}:{PATH}")
    setup = docblock("importing-trial-database")
    assert setup.count("/tmp/import-trial") == 2, setup
    script = "\n".join(
        [
            setup.replace("/tmp/import-trial", str(tmp_path / "import-trial")),
            docblock("importing-mailman-members"),
            "newsletter-connector subscribers import members.txt --pending",
        ]
    )
    result = shell.run(script, check=False)
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stdout.startswith(f"database created (schema revision {head_revision()})\n")
    assert (tmp_path / "members.txt").read_text() == members.read_text()
    assert docblock("importing-pending-refusal").strip() in result.stderr.splitlines()


def test_a_translator_s_catalog_commands(tmp_path: Path) -> None:
    Shell(tmp_path).run(docblock("reader-pages-translate"))
    assert (tmp_path / "my-catalogs" / "fr" / "LC_MESSAGES" / "messages.mo").stat().st_size > 0


def test_serving_standalone_under_gunicorn(tmp_path: Path) -> None:
    """The standalone page's commands, on SQLite instead of its PostgreSQL server (set up by
    the operations page) and on a free port."""
    port = free_port()
    block = replaced(
        docblock("gunicorn-serve"),
        {
            "postgresql://app@db/newsletter": f"sqlite:///{tmp_path / 'newsletter.db'}",
            "--bind 0.0.0.0:8000": f"--bind 127.0.0.1:{port}",
        },
    )
    shell = Shell(tmp_path, NEWSLETTER_SITE_SECRET=SECRET)
    with shell.running(block, probe_url=f"http://127.0.0.1:{port}/healthz") as log:
        assert httpx.get(f"http://127.0.0.1:{port}/signup").status_code == 200
    assert f"database created (schema revision {head_revision()})" in log.read_text()


def test_uvicorn_and_the_runner_beside_it(tmp_path: Path) -> None:
    """The ASGI page's FastAPI site served by uvicorn as the page runs it (on a free port),
    with the sync runner beside it."""
    (tmp_path / "mysite.py").write_text(docblock("mount-fastapi"))
    port = free_port()
    upgrade, uvicorn, sync = replaced(
        docblock("asgi-run"), {"--port 8000": f"--port {port}"}
    ).splitlines()
    shell = Shell(
        tmp_path,
        NEWSLETTER_CONFIG="",
        NEWSLETTER_DATABASE_URL=f"sqlite:///{tmp_path / 'newsletter.db'}",
        NEWSLETTER_SITE_SECRET=SECRET,
    )
    shell.run(upgrade)
    site = f"http://127.0.0.1:{port}"
    with shell.running(uvicorn, probe_url=f"{site}/newsletter/healthz"):
        assert httpx.get(f"{site}/newsletter/signup").status_code == 200
        assert "/newsletter/signup" in httpx.get(site + "/").text
        # The page's runner environment: the base_url the site passes in code, as well.
        (base_url,) = re.findall(
            r"`NEWSLETTER_BASE_URL=(\S+)`", (ROOT / "docs/mounting/asgi.md").read_text()
        )
        shell.env["NEWSLETTER_BASE_URL"] = base_url
        with shell.running(sync, says="sync runner started"):
            pass

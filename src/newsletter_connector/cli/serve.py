"""``newsletter-connector serve`` and ``quickstart``: the app under gunicorn."""

from __future__ import annotations

import logging
import os
import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import click
from sqlalchemy.engine import make_url

from .. import __version__
from ..plugins.sql_store.failure_reason import masked_url
from ..settings import CONFIG_ENV, DEFAULT_CONFIG_FILE, Settings
from .context import CliState, fail, notice, pass_state, reports_errors
from .settings_file import quickstart_settings_text, write_new

#: Seconds a worker may spend on one request, body included: it cuts off a slow client
#: (docs/contributing/decisions/reader-pages.md, "Slow clients are bounded by the worker timeout").
DEFAULT_WORKER_TIMEOUT = 30


@click.command("serve")
@click.option("--bind", default="127.0.0.1:8000", show_default=True, help="host:port to listen on.")
@click.option("--workers", default=2, show_default=True, type=click.IntRange(1, 64))
@click.option(
    "--base-url",
    help="Public https address (default: the base_url setting; http://<bind> only with "
    "allow_insecure_http_links).",
)
@click.option(
    "--timeout",
    default=DEFAULT_WORKER_TIMEOUT,
    show_default=True,
    type=click.IntRange(1, 3600),
    help="Seconds a worker may spend on one request, reading its body included; past it the "
    "connection is cut and the worker restarted (bounds what a slow client can hold).",
)
@pass_state
@reports_errors
def serve(state: CliState, bind: str, workers: int, base_url: str | None, timeout: int) -> None:
    """Serve the app under gunicorn (put a buffering reverse proxy in front: docs/security.md).
    Refuses to start without an https base_url, unless the development setting
    allow_insecure_http_links allows http."""
    sources = {"base_url": "--base-url"}
    settings = state.settings(base_url=base_url, sources=sources)
    if settings.base_url is None and settings.allow_insecure_http_links:
        sources = {"base_url": "--bind"}
        settings = state.settings(base_url=f"http://{bind}", sources=sources)
    settings.require_https_links()
    if settings.allow_insecure_http_links:
        notice(
            "allow_insecure_http_links is on "
            f"({settings.source_of('allow_insecure_http_links')}): a development setting, "
            "mailed links may be plain http",
            settings,
            level=logging.WARNING,
        )
    service = state.service(base_url=settings.base_url, sources=sources)
    service.check_plugins()  # the workers would fail one by one, after gunicorn started
    settings = service.settings
    service.close()
    serve_under_gunicorn(settings, bind=bind, workers=workers, timeout=timeout)


@click.command("quickstart")
@click.option("--bind", default="127.0.0.1:8000", show_default=True, help="host:port to listen on.")
@pass_state
@reports_errors
def quickstart(state: CliState, bind: str) -> None:
    """Migrate the database, issue a first API key, print a curl line, and serve, with a sync
    runner beside the app.

    Without a base_url it serves http://<bind> and allows insecure http links for that local
    address only, saying so: a trial, not a deployment. Unless a settings file is named or
    present (or NEWSLETTER_CONFIG is set but empty), it leaves newsletter.toml in the working
    directory with the database, the address and the development setting, which every command
    run there then reads; an existing file is never overwritten. A busy port fails before
    anything is done (no key issued)."""
    require_free_port(bind)
    overrides: dict[str, Any] = {}
    if state.settings().base_url is None:
        overrides = {"base_url": f"http://{bind}", "allow_insecure_http_links": True}
    service = state.service(ready=False, **overrides)
    base_url = service.settings.require_https_links()
    service.check_plugins()
    service.initialise()
    existing = [k for k in service.admin.list_api_keys() if k.active]
    database = masked_url(make_url(service.settings.database_url))
    click.echo(f"newsletter-connector {__version__} on {database}")
    report_settings_file(state, service.settings, development_http=bool(overrides))
    if urlsplit(base_url).scheme == "http":
        click.echo(
            f"WARNING: local trial: readers' links would be plain http ({base_url}); "
            "allow_insecure_http_links is on, for development only. Set an https base_url "
            "(NEWSLETTER_BASE_URL) before real readers sign up."
        )
        if urlsplit(base_url).netloc != bind:
            click.echo(
                f"WARNING: base_url {base_url} ({service.settings.source_of('base_url')}) is "
                f"not the address served, http://{bind}: links and the curl line point there."
            )
    if existing:
        click.echo(
            f"API keys already exist ({', '.join(k.label for k in existing)}); "
            "issue another with: newsletter-connector keys create --label NAME"
        )
        key = "<your API key>"
    else:
        key = service.admin.create_api_key("quickstart").key
        click.echo(f"API key (shown once): {key}")
    click.echo("Try it:")
    click.echo(f"  curl -H 'Authorization: Bearer {key}' {base_url}/api/newsletter/v1/status")
    click.echo(f"Admin area: {base_url}/admin")
    if not service.admin_access.list_users():
        click.echo("  make its first owner with: newsletter-connector admin create-user NAME")
    click.echo(
        "The sync runner runs beside the app: imports, acts on many subscribers and deliveries "
        "to a connected platform are done without another command."
    )
    settings = service.settings
    service.close()
    serve_under_gunicorn(
        settings, bind=bind, workers=1, timeout=DEFAULT_WORKER_TIMEOUT, sync_runner=True
    )


def serve_under_gunicorn(
    settings: Settings, *, bind: str, workers: int, timeout: int, sync_runner: bool = False
) -> None:
    """:func:`..gunicorn_app.run`, imported only now: gunicorn is needed to serve, not to
    import the package or run any other command."""
    from ..gunicorn_app import run

    run(settings, bind=bind, workers=workers, timeout=timeout, sync_runner=sync_runner)


def report_settings_file(state: CliState, settings: Settings, *, development_http: bool) -> None:
    """Say which settings file this run read, or write :data:`DEFAULT_CONFIG_FILE` (never over
    an existing one) so that the commands run in this folder next read the same settings."""
    if state.config_file is not None:
        click.echo(f"settings read from {state.config_file} (left as it is)")
        return
    if os.environ.get(CONFIG_ENV) == "":
        click.echo(f"{CONFIG_ENV} is set but empty: no settings file read or written")
        return
    path = Path(DEFAULT_CONFIG_FILE)
    if write_new(path, quickstart_settings_text(settings, development_http=development_http)):
        click.echo(
            f"settings written to {path}: every newsletter-connector command run in this "
            "folder reads them"
        )
    else:  # created since this run looked for it: someone else's, so left alone
        click.echo(f"{path} appeared meanwhile and was left as it is; it was not read now")


def require_free_port(bind: str) -> None:
    """Exit 1, saying how to pick another, unless ``host:port`` can be listened on now."""
    host, _, port = bind.rpartition(":")
    host = host.strip("[]")
    if not port.isdigit():
        fail(f"--bind must be host:port, got {bind!r}")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as sock:
        # As gunicorn does: a port left in TIME_WAIT by a stopped server is free.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, int(port)))
        except OSError as exc:
            fail(
                f"cannot listen on {bind} ({exc.strerror}): is another server running there? "
                "Pick another address, e.g. `newsletter-connector quickstart --bind 127.0.0.1:8001`"
            )

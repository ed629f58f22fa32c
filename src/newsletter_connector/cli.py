"""The ``newsletter-connector`` command line: a thin edge over :class:`NewsletterService`.

Every command reads settings from ``NEWSLETTER_*`` / ``--config``. Bad arguments or a failed
operation exit non-zero with one clear line on stderr; secrets are read from stdin or a prompt,
never from argv (where ``ps`` would show them).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from . import __version__
from .errors import NewsletterError
from .gunicorn_app import DEFAULT_WORKER_TIMEOUT
from .https_rule import without_credentials
from .plugin_manager import (
    build_plugin_manager,
    issue_renderers,
    outbound_transports,
    storage_backends,
)
from .service import NewsletterService
from .settings import Settings, SettingsError
from .timeutil import isoformat_z

F = TypeVar("F", bound=Callable[..., Any])


def fail(message: str) -> None:
    """Exit 1 with one line on stderr."""
    click.echo(f"error: {message}", err=True)
    sys.exit(1)


def reports_errors(func: F) -> F:
    """Turn domain and settings errors into one clear line and exit status 1."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (NewsletterError, SettingsError) as exc:
            fail(str(exc))

    return wrapper  # type: ignore[return-value]


class CliState:
    """Lazily built service for the command being run."""

    def __init__(self, config_file: str | None) -> None:
        self.config_file = config_file
        self._service: NewsletterService | None = None

    def settings(self, **overrides: Any) -> Settings:
        return Settings.load(config_file=self.config_file, **overrides)

    def service(self, *, ready: bool = True, **overrides: Any) -> NewsletterService:
        if self._service is None:
            self._service = NewsletterService.build(self.settings(**overrides))
            if ready:
                self._service.check_ready(tolerate_outage=False)
        return self._service


pass_state = click.make_pass_decorator(CliState)


def read_secret(prompt: str) -> str:
    """A secret from stdin when piped, else from a hidden prompt."""
    if not sys.stdin.isatty():
        value = sys.stdin.readline().rstrip("\r\n")
    else:
        value = click.prompt(prompt, hide_input=True, confirmation_prompt=True)
    if not value:
        fail(f"{prompt.lower()} is empty")
    return value


@click.group()
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False),
    envvar="NEWSLETTER_CONFIG",
    help="TOML settings file (also $NEWSLETTER_CONFIG).",
)
@click.version_option(__version__, prog_name="newsletter-connector")
@click.pass_context
def cli(ctx: click.Context, config_file: str | None) -> None:
    """Mailing list, issues, contact messages and analytics for a news site."""
    ctx.obj = CliState(config_file)


# -- database ------------------------------------------------------------------------------


@cli.group()
def db() -> None:
    """Database schema."""


@db.command("upgrade")
@pass_state
@reports_errors
def db_upgrade(state: CliState) -> None:
    """Migrate the database to this version's schema (and create the site secret)."""
    service = state.service(ready=False)
    service.initialise()
    click.echo(f"database is up to date ({state.settings().database_url.split('://')[0]})")


@db.command("current")
@pass_state
@reports_errors
def db_current(state: CliState) -> None:
    """Say whether the database schema is current."""
    state.service(ready=True)
    click.echo("database schema is current")


# -- API keys --------------------------------------------------------------------------------


@cli.group()
def keys() -> None:
    """Newsletter API keys."""


@keys.command("create")
@click.option("--label", required=True, help="A name for the key, e.g. the client using it.")
@pass_state
@reports_errors
def keys_create(state: CliState, label: str) -> None:
    """Issue a key. It is printed exactly once; only its SHA-256 digest is stored."""
    issued = state.service().admin.create_api_key(label)
    click.echo(issued.key)
    click.echo(
        f"key {issued.record.label!r} created; store it now, it cannot be shown again", err=True
    )


@keys.command("list")
@pass_state
@reports_errors
def keys_list(state: CliState) -> None:
    """List keys (label, prefix, created, revoked); never the keys themselves."""
    records = state.service().admin.list_api_keys()
    if not records:
        click.echo("no API keys")
        return
    for record in records:
        revoked = f"revoked {isoformat_z(record.revoked_at)}" if record.revoked_at else "active"
        click.echo(
            f"{record.id}\t{record.label}\t{record.key_prefix}…\t"
            f"created {isoformat_z(record.created_at)}\t{revoked}"
        )


@keys.command("revoke")
@click.argument("label_or_id")
@pass_state
@reports_errors
def keys_revoke(state: CliState, label_or_id: str) -> None:
    """Revoke a key by label or id; effective on the next request."""
    record = state.service().admin.revoke_api_key(label_or_id)
    click.echo(f"key {record.label!r} revoked")


# -- list-source ---------------------------------------------------------------------------


@cli.group()
def listsource() -> None:
    """The read-only list-source surface (listmonk dialect)."""


@listsource.command("set-credentials")
@click.option("--user", required=True, help="The API user name the platform will send.")
@pass_state
@reports_errors
def listsource_set_credentials(state: CliState, user: str) -> None:
    """Turn the surface on; the key is read from stdin or a prompt."""
    key = read_secret("List-source key")
    state.service().admin.set_listsource_credentials(user, key)
    click.echo(f"list-source surface enabled for user {user!r}")


@listsource.command("disable")
@pass_state
@reports_errors
def listsource_disable(state: CliState) -> None:
    """Turn the surface off (every request answers 404)."""
    was_on = state.service().admin.disable_listsource()
    click.echo("list-source surface disabled" if was_on else "list-source surface was already off")


# -- connection ----------------------------------------------------------------------------


@cli.group()
def connection() -> None:
    """The connection to the mailing platform (export endpoints and pushed events)."""


@connection.command("set")
@click.option("--platform-base", required=True, help="The platform's https base address.")
@click.option("--transport", required=True, help="How events are pushed: events or platform.")
@pass_state
@reports_errors
def connection_set(state: CliState, platform_base: str, transport: str) -> None:
    """Configure the connection; the shared bearer token is read from stdin or a prompt."""
    token = read_secret("Connection token")
    record = state.service().admin.set_connection(
        platform_base=platform_base, transport=transport, token=token
    )
    shown = without_credentials(record.platform_base)
    click.echo(f"connection active: {shown} via {record.transport}")


@connection.command("show")
@pass_state
@reports_errors
def connection_show(state: CliState) -> None:
    """Show the active connection (never its token, nor credentials in its address)."""
    record = state.service().admin.connection()
    if record is None:
        click.echo("no connection configured")
        return
    click.echo(f"platform_base: {without_credentials(record.platform_base)}")
    click.echo(f"transport: {record.transport}")
    click.echo("token: (set, not shown)")
    click.echo(f"since: {isoformat_z(record.created_at)}")


@connection.command("disable")
@pass_state
@reports_errors
def connection_disable(state: CliState) -> None:
    """Disable the connection: nothing is pushed, export endpoints answer 404."""
    was_on = state.service().admin.disable_connection()
    click.echo("connection disabled" if was_on else "no connection was configured")


# -- erasure -------------------------------------------------------------------------------


@cli.command("erase")
@click.argument("email")
@pass_state
@reports_errors
def erase(state: CliState, email: str) -> None:
    """Erase everything stored about EMAIL, subscriber or not.

    Deletes the subscriber (if any), the contact messages sent from EMAIL and every outbox
    event carrying it (queued or delivered), in one transaction, and keeps a deletion record
    (a keyed hash of the address, never the address) noting what was erased. Prints what was
    erased, never the address. Exit status 0 when done (also when nothing was stored), 1 when
    EMAIL is not an address or the database cannot be reached.
    """
    result = state.service().subscribers.erase_address(email)
    if result.previous_status is None:
        click.echo("subscriber: none")
    else:
        click.echo(f"subscriber: erased (was {result.previous_status})")
    click.echo(f"contact messages: {result.erased_messages} erased")
    click.echo(f"undelivered events: {result.discarded_events} discarded")
    click.echo("deletion recorded")


# -- plugins -------------------------------------------------------------------------------


@cli.command("plugins")
def plugins_command() -> None:
    """List loaded plugins and what they offer."""
    pm = build_plugin_manager()
    click.echo("plugins:")
    for name, plugin in sorted(pm.list_name_plugin(), key=lambda item: str(item[0])):
        dist = next((d for p, d in pm.list_plugin_distinfo() if p is plugin), None)
        origin = f" ({dist.project_name} {dist.version})" if dist else " (built-in)"
        click.echo(f"  {name}{origin}")
    for title, offered in (
        ("storage backends", storage_backends(pm)),
        ("issue renderers", issue_renderers(pm)),
        ("outbound transports", outbound_transports(pm)),
    ):
        click.echo(f"{title}:")
        for descriptor in offered:
            click.echo(f"  {descriptor.name}: {descriptor.description}")
        if not offered:
            click.echo("  (none)")


# -- serving -------------------------------------------------------------------------------


@cli.command("serve")
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
    from .gunicorn_app import run

    settings = state.settings(base_url=base_url)
    if settings.base_url is None and settings.allow_insecure_http_links:
        settings = state.settings(base_url=f"http://{bind}")
    settings.require_https_links()
    service = state.service(base_url=settings.base_url)
    settings = service.settings
    service.close()
    run(settings, bind=bind, workers=workers, timeout=timeout)


@cli.command("quickstart")
@click.option("--bind", default="127.0.0.1:8000", show_default=True, help="host:port to listen on.")
@pass_state
@reports_errors
def quickstart(state: CliState, bind: str) -> None:
    """Migrate the database, issue a first API key, print a curl line, and serve.

    Without a base_url it serves http://<bind> and allows insecure http links for that local
    address only, saying so: a trial, not a deployment."""
    from .gunicorn_app import run

    overrides: dict[str, Any] = {}
    if state.settings().base_url is None:
        overrides = {"base_url": f"http://{bind}", "allow_insecure_http_links": True}
    service = state.service(ready=False, **overrides)
    base_url = service.settings.require_https_links()
    service.initialise()
    existing = [k for k in service.admin.list_api_keys() if k.active]
    click.echo(f"newsletter-connector {__version__} on {service.settings.database_url}")
    if overrides:
        click.echo(
            f"WARNING: local trial: readers' links would be plain http ({base_url}); "
            "allow_insecure_http_links is on for this address only. Set NEWSLETTER_BASE_URL "
            "to your public https address before real readers sign up."
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
    settings = service.settings
    service.close()
    run(settings, bind=bind, workers=1)


# -- commands in their own modules ---------------------------------------------------------


def _register_commands() -> None:
    """Add the commands defined in their own modules (imported here to avoid cycles)."""
    from .digest_cli import digest
    from .sync_cli import COMMANDS

    for command in (digest, *COMMANDS):
        cli.add_command(command)


_register_commands()


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="newsletter-connector")

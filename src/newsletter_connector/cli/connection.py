"""``newsletter-connector connection ...``: the connection to the mailing platform."""

from __future__ import annotations

import click

from ..https_rule import without_credentials
from ..timeutil import isoformat_z
from .context import CliState, fail, pass_state, read_secret, reports_errors


@click.group("connection")
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
    state.audit("connection.set", f"{shown} via {record.transport}")
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
    state.audit("connection.disable", "disabled" if was_on else "was not configured")
    click.echo("connection disabled" if was_on else "no connection was configured")


@connection.command("test")
@pass_state
@reports_errors
def connection_test(state: CliState) -> None:
    """Ask the platform whether it accepts the connection: for the events transport, POST an
    empty batch to {platform_base}/v1/events with the token (15 s at most). Exit status 1 when
    it is not reachable or the transport cannot be tested."""
    check = state.service().admin.test_connection()
    state.audit("connection.test", check.message)
    if not check.reachable:
        fail(check.message)
    click.echo(check.message)

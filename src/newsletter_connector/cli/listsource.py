"""``newsletter-connector listsource ...``: the read-only list-source surface."""

from __future__ import annotations

import click

from .context import CliState, pass_state, read_secret, reports_errors


@click.group("listsource")
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


@listsource.command("show")
@pass_state
@reports_errors
def listsource_show(state: CliState) -> None:
    """Say whether the surface is on. Only digests of the user and key are stored, so neither
    can be shown; set-credentials replaces both."""
    if state.service().admin.listsource_enabled():
        click.echo(
            "list-source surface enabled; user and key are stored as SHA-256 digests only "
            "(they cannot be shown: set-credentials replaces them)"
        )
    else:
        click.echo("list-source surface disabled (turn it on with set-credentials)")

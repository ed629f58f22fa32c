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
    state.audit("listsource.set", user)
    click.echo(f"list-source surface enabled for user {user!r}")


@listsource.command("disable")
@pass_state
@reports_errors
def listsource_disable(state: CliState) -> None:
    """Turn the surface off (every request answers 404)."""
    was_on = state.service().admin.disable_listsource()
    state.audit("listsource.disable", "turned off" if was_on else "already off")
    click.echo("list-source surface disabled" if was_on else "list-source surface was already off")


@listsource.command("show")
@pass_state
@reports_errors
def listsource_show(state: CliState) -> None:
    """Say whether the surface is on, and for which user. Only a digest of the key is
    stored, so it cannot be shown; set-credentials replaces it."""
    status = state.service().admin.listsource_status()
    if status.enabled:
        user = repr(status.user) if status.user is not None else "(name not recorded)"
        click.echo(
            f"list-source surface enabled; user {user}; the key is stored as a SHA-256 digest "
            "only (it cannot be shown: set-credentials replaces it)"
        )
    else:
        click.echo("list-source surface disabled (turn it on with set-credentials)")

"""``newsletter-connector admin ...``: the built-in admin login's users."""

from __future__ import annotations

import click

from ..descriptors import ADMIN_ROLES, OWNER
from ..timeutil import isoformat_z
from .context import CliState, fail, pass_state, read_secret, reports_errors


@click.group("admin")
def admin() -> None:
    """Users of the admin area's built-in login."""


ROLE_CHOICE = click.Choice(ADMIN_ROLES)


@admin.command("create-user")
@click.argument("username")
@click.option(
    "--role",
    type=ROLE_CHOICE,
    default=OWNER,
    show_default=True,
    help="owner: every page; editor: the newsletter's pages, not the settings or the audit log",
)
@pass_state
@reports_errors
def admin_create_user(state: CliState, username: str, role: str) -> None:
    """Add a user; the password (at least 12 characters) is read from stdin when piped,
    else prompted for twice, hidden."""
    password = read_secret("Password")
    user = state.service().admin_access.create_user(username, password, role=role)
    state.audit("admin_user.create", user.username)
    click.echo(f"admin user {user.username!r} created ({user.role})")


@admin.command("set-role")
@click.argument("username")
@click.argument("role", type=ROLE_CHOICE)
@pass_state
@reports_errors
def admin_set_role(state: CliState, username: str, role: str) -> None:
    """Make a user an owner or an editor (the last owner stays one while other users remain);
    its sessions take the role from their next request."""
    state.service().admin_access.set_role(username, role)
    state.audit("admin_user.role", f"{username} is now an {role}")
    click.echo(f"admin user {username!r} is now an {role}")


@admin.command("list-users")
@pass_state
@reports_errors
def admin_list_users(state: CliState) -> None:
    """List users (username, role, created); never their password hashes."""
    users = state.service().admin_access.list_users()
    if not users:
        click.echo("no admin users")
        return
    for user in users:
        click.echo(f"{user.username}\t{user.role}\tcreated {isoformat_z(user.created_at)}")


@admin.command("delete-user")
@click.argument("username")
@pass_state
@reports_errors
def admin_delete_user(state: CliState, username: str) -> None:
    """Delete a user and sign out its sessions."""
    if not username.strip():
        fail("username is empty")
    state.service().admin_access.delete_user(username)
    state.audit("admin_user.delete", username)
    click.echo(f"admin user {username!r} deleted")

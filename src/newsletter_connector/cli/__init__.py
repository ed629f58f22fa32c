"""The ``newsletter-connector`` command line: a thin edge over :class:`NewsletterService`.

Settings come from ``--config`` / ``NEWSLETTER_CONFIG`` (else ``newsletter.toml`` in the
working directory, when there is one) and ``NEWSLETTER_*``; a failure exits 1 with one line on
stderr; secrets are read from stdin or a prompt, never from argv (where ``ps`` would show
them). Each command group lives in its own module, importing :mod:`.context`, never this one.
"""

from __future__ import annotations

import gc

import click

from .. import __version__
from . import (
    admin,
    connection,
    database,
    digest,
    erase,
    keys,
    listsource,
    outbox,
    plugins,
    serve,
    subscribers,
    sync,
)
from .context import CliState


@click.group()
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False),
    envvar="NEWSLETTER_CONFIG",
    help="TOML settings file (also $NEWSLETTER_CONFIG; default: newsletter.toml in the "
    "working directory, when there is one).",
)
@click.version_option(__version__, prog_name="newsletter-connector")
@click.pass_context
def cli(ctx: click.Context, config_file: str | None) -> None:
    """Mailing list, issues, contact messages and analytics for a news site."""
    ctx.obj = CliState(config_file)


for _command in (
    database.db,
    keys.keys,
    listsource.listsource,
    connection.connection,
    erase.erase,
    subscribers.subscribers,
    plugins.plugins_command,
    serve.serve,
    serve.quickstart,
    sync.sync,
    outbox.outbox,
    digest.digest,
    admin.admin,
):
    cli.add_command(_command)


def main() -> None:
    """Console-script entry point."""
    # What is loaded lives as long as the process: out of the collector's full collections,
    # which a long import or a runner would otherwise repeat (bench: subscriber_import).
    gc.freeze()
    cli(prog_name="newsletter-connector")


__all__ = ["cli", "main"]

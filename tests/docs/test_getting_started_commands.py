"""Getting started's set-up commands, run as a newcomer runs them: steps 2, 3 and 6 (configure,
create the schema and a key, connect the platform) one after another in one fresh bash
(``-euo pipefail``), in an empty folder, with no setting of the suite's in its environment.
The database is the guide's SQLite choice (its PostgreSQL set-up is run by
test_operations_commands); what each command prints is checked against the guide's words."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from newsletter_connector.plugins.sql_store.migrate import head_revision
from tests.support.docblocks import docblock

# Runs the command line in a subprocess, on a SQLite file of its own
pytestmark = [pytest.mark.system, pytest.mark.database_independent]

#: Stands for the platform's token the reader is given (the guide reads it from the variable).
PLATFORM_TOKEN = "platform-token-for-the-guide"


def test_configure_create_the_schema_and_a_key_and_connect_the_platform(tmp_path: Path) -> None:
    configure = docblock("start-configure")
    postgres = "postgresql://app@db/newsletter   # or sqlite:///newsletter.db"
    assert configure.count(postgres) == 1, configure
    script = "\n".join(
        [
            configure.replace(postgres, "sqlite:///newsletter.db"),
            docblock("start-schema"),
            docblock("start-connect"),
        ]
    )
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        env={
            "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
            "HOME": str(tmp_path),
            "PLATFORM_TOKEN": PLATFORM_TOKEN,
        },
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"database created (schema revision {head_revision()})"
    assert re.fullmatch(r"nlk_[\w-]+", lines[1]), lines[1]
    assert "key 'crm' created; store it now, it cannot be shown again" in result.stderr
    assert lines[2] == "connection active: https://platform.example via events"
    assert lines[3] == "platform connection: https://platform.example via events"
    assert "oldest pending event: none" in lines
    assert PLATFORM_TOKEN not in result.stdout + result.stderr
    assert (tmp_path / "newsletter.db").exists()

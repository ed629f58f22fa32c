"""Benchmark: the MySQL and MariaDB drivers a site could give the store, side by side.

    python -m bench.mysql_drivers [--server mysql://root@127.0.0.1:3306/]

Runs, for each of PyMySQL, mysqlclient (``MySQLdb``) and MariaDB Connector/Python that is
installed, the store's kinds of round trip on a table shaped like ``nc_subscribers``: 2,000
reads of one row by key (a signup's look-up, an API read), 40 reads of 500 rows (a walk's
pages), 1,000 one-row inserts each committed (signups) and 20 inserts of 500 rows (an
import's chunks). Reports each as operations (or rows) per second. The drivers that are not
installed are named and left out; none of them is a dependency of the benchmarks.
"""

from __future__ import annotations

import argparse
import importlib
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy.engine import make_url

from bench.harness import report

#: Import name and label of each candidate.
DRIVERS = (("pymysql", "PyMySQL"), ("MySQLdb", "mysqlclient"), ("mariadb", "MariaDB Connector"))
COLUMNS = 20
DATABASE = "nc_bench_drivers"


def connect(module: Any, url: str, database: str | None) -> Any:
    """A connection of ``module`` to the server of ``url`` (and ``database``), in UTF-8."""
    parts = make_url(url)
    options: dict[str, Any] = {
        "host": parts.host or "127.0.0.1",
        "port": parts.port or 3306,
        "user": parts.username or "root",
        "password": parts.password or "",
    }
    if database:
        options["database"] = database
    if module.__name__ == "MySQLdb":
        options["passwd"] = options.pop("password")
        if database:
            options["db"] = options.pop("database")
    if module.__name__ != "mariadb":
        options["charset"] = "utf8mb4"
    return module.connect(**options)


def rate(count: int, work: Callable[[], None]) -> float:
    """``count`` divided by the seconds ``work`` takes."""
    began = time.perf_counter()
    work()
    return count / (time.perf_counter() - began)


def measure(module: Any, url: str) -> dict[str, float]:
    """The four rates of one driver, on a fresh table."""
    paramstyle = "?" if module.__name__ == "mariadb" else "%s"
    connection = connect(module, url, DATABASE)
    cursor = connection.cursor()
    cursor.execute("DROP TABLE IF EXISTS readers")
    columns = ", ".join(f"c{n} VARCHAR(200)" for n in range(COLUMNS))
    cursor.execute(
        f"CREATE TABLE readers (id BIGINT AUTO_INCREMENT PRIMARY KEY, {columns})"
        " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
    )
    names = ", ".join(f"c{n}" for n in range(COLUMNS))
    marks = ", ".join([paramstyle] * COLUMNS)
    insert = f"INSERT INTO readers ({names}) VALUES ({marks})"
    row = tuple(f"value {n} of a reader, josé" for n in range(COLUMNS))

    def single_inserts() -> None:
        for _ in range(1_000):
            cursor.execute(insert, row)
            connection.commit()

    def chunk_inserts() -> None:
        for _ in range(20):
            cursor.executemany(insert, [row] * 500)
            connection.commit()

    def key_reads() -> None:
        for n in range(2_000):
            cursor.execute(f"SELECT * FROM readers WHERE id = {paramstyle}", (n % 1_000 + 1,))
            cursor.fetchall()

    def page_reads() -> None:
        for page in range(40):
            cursor.execute(
                f"SELECT * FROM readers WHERE id > {paramstyle} ORDER BY id LIMIT 500",
                (page * 250,),
            )
            cursor.fetchall()

    figures = {
        "one-row inserts/s": rate(1_000, single_inserts),
        "rows inserted/s in chunks of 500": rate(10_000, chunk_inserts),
        "reads by key/s": rate(2_000, key_reads),
        "rows read/s in pages of 500": rate(20_000, page_reads),
    }
    cursor.execute("DROP TABLE readers")
    connection.close()
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default="mysql://root@127.0.0.1:3306/")
    args = parser.parse_args(argv)
    installed = []
    for name, label in DRIVERS:
        try:
            installed.append((importlib.import_module(name), label))
        except ImportError:
            print(f"{label} ({name}) is not installed: left out")
    if not installed:
        raise SystemExit("no MySQL driver is installed")
    admin = connect(installed[0][0], args.server, None)
    admin.cursor().execute(f"CREATE DATABASE IF NOT EXISTS {DATABASE}")
    try:
        results = {label: measure(module, args.server) for module, label in installed}
    finally:
        admin.cursor().execute(f"DROP DATABASE IF EXISTS {DATABASE}")
        admin.close()
    baseline = results.get("PyMySQL")
    for label, figures in results.items():
        for figure, value in figures.items():
            report(
                f"mysql_driver[{label}, {figure}]",
                value,
                "per s",
                baseline=baseline[figure] if baseline and label != "PyMySQL" else None,
            )


if __name__ == "__main__":
    main()

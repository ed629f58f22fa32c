"""The baseline for the signups benchmark: the least a committed signup can cost.

A bare falcon app answering ``POST /api/newsletter/v1/subscribers``: parse the JSON body,
then in one transaction insert the address into a scratch table and one event row into
another, and answer 201 with a small JSON body. No key check, no validation, no contact
resource. The database comes from ``BENCH_DATABASE_URL`` (engine as the store builds it).
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import falcon
from sqlalchemy import text
from sqlalchemy.engine import Engine

from newsletter_connector.plugins.sql_store.engine import make_engine

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS bench_signups (email VARCHAR(320) PRIMARY KEY, created_at FLOAT)",
    "CREATE TABLE IF NOT EXISTS bench_signup_events (email VARCHAR(320), payload TEXT)",
)
INSERT_SIGNUP = text("INSERT INTO bench_signups (email, created_at) VALUES (:email, :at)")
INSERT_EVENT = text("INSERT INTO bench_signup_events (email, payload) VALUES (:email, :payload)")


def create_tables(engine: Engine) -> None:
    with engine.begin() as connection:
        for statement in SCHEMA:
            connection.execute(text(statement))


class Signups:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        email = req.get_media()["email"]
        with self.engine.begin() as connection:
            connection.execute(INSERT_SIGNUP, {"email": email, "at": time.time()})
            connection.execute(
                INSERT_EVENT, {"email": email, "payload": json.dumps({"email": email})}
            )
        resp.status = falcon.HTTP_201
        resp.media = {"email": email, "status": "pending"}


def create(url: str) -> Any:
    app = falcon.App()
    app.add_route("/api/newsletter/v1/subscribers", Signups(make_engine(url)))
    return app


def __getattr__(name: str) -> Any:  # gunicorn: bench.bare_signup_app:app
    if name == "app":
        return create(os.environ["BENCH_DATABASE_URL"])
    raise AttributeError(name)

"""A local HTTPS receiver for the sync benchmark, run as its own process.

    python -m bench.https_receiver FOLDER     # prints "READY <port> <ca-file>" when listening

Certificates come from ``trustme`` (its CA is written to FOLDER). Every ``POST`` is answered
200 after its JSON body is parsed and its events counted under the request path's first
segment (``/runner/v1/events`` counts under ``runner``); ``GET /counts`` answers those counts
as ``{segment: {"requests", "events", "distinct"}}``. It lives in its own process so that
its work never competes with the client under measurement for one interpreter.
"""

from __future__ import annotations

import json
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import trustme


def main() -> None:
    folder = Path(sys.argv[1])
    ca = trustme.CA()
    ca_file = folder / "receiver-ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1", "localhost").configure_cert(context)
    lock = threading.Lock()
    counts: dict[str, dict[str, Any]] = {}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out at once (no 40 ms stalls)

        def log_message(self, *args: Any) -> None:
            pass

        def answer(self, body: bytes) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            events = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            segment = self.path.strip("/").split("/")[0]
            with lock:
                entry = counts.setdefault(segment, {"requests": 0, "events": 0, "ids": set()})
                entry["requests"] += 1
                entry["events"] += len(events)
                entry["ids"].update(event["id"] for event in events)
            self.answer(b'{"accepted": true}')

        def do_GET(self) -> None:
            with lock:
                shown = {
                    name: {
                        "requests": e["requests"],
                        "events": e["events"],
                        "distinct": len(e["ids"]),
                    }
                    for name, e in counts.items()
                }
            self.answer(json.dumps(shown).encode())

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print(f"READY {server.server_address[1]} {ca_file}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()

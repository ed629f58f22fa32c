"""The baseline for the overhead benchmark: a bare falcon app returning the same JSON."""

import falcon


class Status:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.media = {"ok": True, "version": "v1", "key": "bench"}


app = falcon.App()
app.add_route("/api/newsletter/v1/status", Status())

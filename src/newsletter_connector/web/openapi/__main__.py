"""``python -m newsletter_connector.web.openapi``: print the document (for docs/openapi.json)."""

from __future__ import annotations

import json

from . import build_document

print(json.dumps(build_document(), indent=2, ensure_ascii=False))

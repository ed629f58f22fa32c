"""``python -m newsletter_connector.web.openapi [connector]``: print the Newsletter API
document (for docs/openapi.json) or, with ``connector``, the Connector's (for
docs/openapi-connector.json)."""

from __future__ import annotations

import json
import sys

from . import build_document
from .connector import build_connector_document

document = build_connector_document() if sys.argv[1:] == ["connector"] else build_document()
print(json.dumps(document, indent=2, ensure_ascii=False))

"""Reading a form that uploads a file (the admin's Import page): ``multipart/form-data`` whose
text fields (the CSRF token first) come before the file, which is handed on as a stream, never
held in memory whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO

import falcon

from ..pages.forms import MAX_FIELDS, MULTIPART, FormData

#: What a form may add to its file's size: the other fields and the multipart framing.
FORM_OVERHEAD = 64 * 1024


@dataclass(frozen=True)
class Upload:
    """The uploaded file: its stream (read it before the request ends) and the name the
    browser gave it (a name only: never a path to open)."""

    stream: BinaryIO
    file_name: str


def read_upload(
    req: falcon.Request, *, file_field: str, max_file_bytes: int
) -> tuple[FormData, Upload | None]:
    """The text fields sent before the part named ``file_field``, and that part (``None``:
    the form had none, or an empty one).

    :raises falcon.HTTPError: 415 not a multipart form, 411 without a ``Content-Length``, 413
        larger than ``max_file_bytes`` and the form's overhead, 400 malformed or with too many
        fields.
    """
    media_type = (req.content_type or "").split(";", 1)[0].strip().lower()
    if media_type != MULTIPART:
        raise falcon.HTTPUnsupportedMediaType(
            title="Unsupported form", description="the form must be sent with its file"
        )
    if req.content_length is None:
        raise falcon.HTTPLengthRequired(
            title="Length required", description="the form must be sent with a Content-Length"
        )
    if req.content_length > max_file_bytes + FORM_OVERHEAD:
        raise falcon.HTTPContentTooLarge(
            title="File too large",
            description=f"the file must be at most {max_file_bytes:,} bytes",
        )
    fields: dict[str, list[str]] = {}
    try:
        for count, part in enumerate(req.get_media()):
            if count >= MAX_FIELDS:
                raise falcon.HTTPBadRequest(description="the form has too many fields")
            if part.name == file_field:
                name = part.filename or ""
                upload = Upload(part.stream, name) if name else None
                return FormData(fields), upload
            fields.setdefault(part.name or "", []).append(part.get_text() or "")
    except (falcon.HTTPBadRequest, falcon.HTTPContentTooLarge):
        raise
    except (falcon.HTTPError, UnicodeDecodeError, ValueError):
        raise falcon.HTTPBadRequest(description="the form could not be read") from None
    return FormData(fields), None

"""The student link of a room (``?class=CODE``) and its QR code, as an SVG string."""

from __future__ import annotations

import io
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import segno

CLASS_PARAM = "class"


def student_link(app_url: str, code: str) -> str:
    """``app_url`` with ``?class=CODE`` (any other query parameters kept, an old ``class`` replaced)."""
    parts = urlsplit(app_url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != CLASS_PARAM]
    return urlunsplit(parts._replace(query=urlencode([*query, (CLASS_PARAM, code)]), fragment=""))


def qr_svg(url: str) -> str:
    """A QR code of ``url`` as a standalone SVG document (black on white, so it scans on a dark theme too)."""
    buffer = io.BytesIO()
    segno.make(url, error="m").save(
        buffer, kind="svg", xmldecl=False, scale=8, border=4, dark="#000", light="#fff", title="Class link"
    )
    return buffer.getvalue().decode("utf-8")

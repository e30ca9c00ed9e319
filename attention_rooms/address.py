"""Where a phone opens the class: the address the lecturer's browser used, unless that names this machine alone.

A lecturer who runs the app on a laptop opens it at ``http://localhost:8501``; a student's phone cannot open that
address. The student link then takes this machine's address on the network (the interface it would use to reach
other machines), or the address the deployment states in ``LAB_PUBLIC_URL``, which always wins when set.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

PUBLIC_URL = "LAB_PUBLIC_URL"  # the environment variable: the app's root as students reach it (https://lab.uni.edu/)
# A documentation address (TEST-NET-1, RFC 5737): connecting a UDP socket to it sends nothing, it only asks the
# operating system which interface would carry the traffic
_PROBE = ("192.0.2.1", 9)


@dataclass(frozen=True)
class StudentBase:
    url: str  # the app's address as a student opens it (the lecturer's path and page kept)
    why: str  # what the lecturer is told about it ("" when it is the lecturer's own address)
    reachable: bool = True  # False: no address a phone can open was found


def is_loopback(host: str) -> bool:
    """``localhost`` (and its subdomains) or an address in 127.0.0.0/8 or ::1."""
    name = host.strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def network_address() -> str | None:
    """This machine's address on its network (the interface of its default route), or None when it has none."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(_PROBE)
            address = probe.getsockname()[0]
        except OSError:
            return None
    return None if is_loopback(address) or address == "0.0.0.0" else address


def student_base(
    app_url: str, base_path: str = "", public_url: str | None = None, lan: str | None = None
) -> StudentBase:
    """The address students open for the page at ``app_url`` (query already removed): under ``public_url`` when
    given (``base_path``, the server's own prefix, replaced by the public one), else ``app_url`` with its host
    replaced by ``lan`` when the host is a loopback name."""
    parts = urlsplit(app_url)
    if public_url:
        public = urlsplit(public_url)
        page = parts.path.removeprefix("/" + base_path.strip("/")) if base_path.strip("/") else parts.path
        path = public.path.rstrip("/") + "/" + page.lstrip("/")
        return StudentBase(urlunsplit((public.scheme, public.netloc, path, "", "")), f"the address {PUBLIC_URL} sets")
    if not is_loopback(parts.hostname or ""):
        return StudentBase(app_url, "")
    if lan is None:
        return StudentBase(
            app_url,
            f"This machine has no address on a network, so phones cannot open this link: connect it to the room's "
            f"Wi-Fi, or set {PUBLIC_URL} to the address students reach.",
            reachable=False,
        )
    netloc = lan if parts.port is None else f"{lan}:{parts.port}"
    why = f"this machine's address on the network, {lan}, since you opened the app at {parts.hostname}"
    return StudentBase(urlunsplit(parts._replace(netloc=netloc)), why)


def student_base_here(app_url: str, base_path: str) -> StudentBase:
    """:func:`student_base` with this process's ``LAB_PUBLIC_URL`` and network address."""
    public = os.environ.get(PUBLIC_URL, "").strip() or None
    lan = None if public or not is_loopback(urlsplit(app_url).hostname or "") else network_address()
    return student_base(app_url, base_path, public, lan)

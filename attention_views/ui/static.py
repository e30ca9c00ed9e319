"""The app's static folder: Streamlit serves ``static/`` at the app's root as ``app/static/``
(``server.enableStaticServing`` in .streamlit/config.toml); the class signals, plotly.js and the components' code are
written there."""

import gzip
import hashlib
import os
import shutil
from pathlib import Path

FOLDER = Path(__file__).resolve().parents[2] / "static"
URL = "app/static"  # relative to a page, under the app's base path


def publish(source: Path, folder: str, hashed: bool = False) -> str:
    """The URL, relative to a page, of ``source`` copied into ``static/<folder>/`` (if not there yet) with a gzipped
    copy beside it for nginx's ``gzip_static``, each written whole before it is renamed into place (replicas
    starting together each write their own). ``hashed``: the copy's name holds the start of its content's SHA-256,
    so a browser may keep it for good (a changed file is another URL)."""
    name = source.name
    if hashed:
        name = f"{source.stem}.{hashlib.sha256(source.read_bytes()).hexdigest()[:12]}{source.suffix}"
    target = FOLDER / folder / name
    for made, write in ((target, shutil.copyfile), (target.with_name(name + ".gz"), _gzipped)):
        if not made.exists():
            made.parent.mkdir(parents=True, exist_ok=True)
            partial = made.with_suffix(f".{os.getpid()}.part")
            write(source, partial)
            partial.replace(made)
    return f"{URL}/{folder}/{name}"


def _gzipped(source: Path, target: Path) -> None:
    target.write_bytes(gzip.compress(source.read_bytes(), compresslevel=9, mtime=0))

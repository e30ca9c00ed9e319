"""Streamlit's icon font cut to the icons that can be shown, for nginx to send in its place.

Streamlit's frontend asks for its Material Symbols font (``static/media/MaterialSymbols-Rounded.<hash>.woff2``,
375 kB, over 4,000 icons) as every page starts, whatever the page shows; an icon is text (``expand_more``) that
the font's required ligatures (``rlig``) draw as one glyph. ``fonts/MaterialSymbols-Rounded-subset.woff2`` beside
this file is that font with only the glyphs of the icons named anywhere in the installed Streamlit package (its
frontend's ``:material/name:`` and its Python's) or in this app (``:material/name:`` in its code, and the
navigation's page icons), each glyph and ligature as in Streamlit's file: about 17 kB. deploy/run_local.py puts it
in its copy of Streamlit's frontend under the font's own name (:func:`put_in`), so nginx sends it; an icon that
is not in it would show as its name, so the tests hold every icon named to the subset
(tests/deploy/test_icon_font.py) and draw each in a browser with both fonts (tests/e2e/test_browser_icon_font.py).

The subset is made by hand from the installed Streamlit's font, never at run time (fontTools is no dependency of
the app), and its manifest records the font it was made from: when Streamlit's font changes, :func:`put_in`
leaves Streamlit's own font in place and the tests fail until it is made again::

    python -m pip install --require-hashes --target /tmp/fonttools -r deploy/fonts/requirements.txt
    PYTHONPATH=/tmp/fonttools python deploy/icon_font.py    # this project's venv: Streamlit's font and the app's icons
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from importlib.util import find_spec
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
STREAMLIT = Path(find_spec("streamlit").submodule_search_locations[0]).resolve()
FONT = "static/media/MaterialSymbols-Rounded.*.woff2"  # in Streamlit's frontend folder (its static/)
SUBSET = HERE / "fonts" / "MaterialSymbols-Rounded-subset.woff2"
MANIFEST = HERE / "fonts" / "MaterialSymbols-Rounded-subset.json"
NAMED = re.compile(r":material/([a-z0-9_]+):")
APP_CODE = ("pages", "attention_views")  # where the app names its icons, beside app.py


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def named_in(files: list[Path]) -> set[str]:
    """The icons ``:material/name:`` in ``files``."""
    return {name for f in files for name in NAMED.findall(f.read_text(errors="ignore"))}


def streamlit_icons(streamlit: Path = STREAMLIT) -> set[str]:
    """Every icon the installed Streamlit names: its frontend's and its Python's (docstrings included)."""
    return named_in(sorted(streamlit.rglob("*.js")) + sorted(streamlit.rglob("*.py")))


def app_files(root: Path = ROOT) -> list[Path]:
    return [root / "app.py", *(p for folder in APP_CODE for p in sorted((root / folder).rglob("*.py")))]


def app_icons(root: Path = ROOT) -> set[str]:
    """Every icon the app shows: ``:material/name:`` in its code and the navigation's page icons (app.py writes
    those as ``:material/{icon}:``)."""
    from attention_views.pure.navigation import NAVIGATION

    return named_in(app_files(root)) | {icon for pages in NAVIGATION.values() for *_, icon in pages}


def font_in(frontend: Path) -> Path | None:
    """Streamlit's icon font in a frontend folder (Streamlit's static/ or a copy), or None."""
    found = sorted(frontend.glob(FONT))
    return found[0] if len(found) == 1 else None


def manifest() -> dict:
    """What the subset was made from and holds: ``source`` (the font's name), ``source_sha256``, ``sha256`` (the
    subset's), ``icons`` (kept), ``absent`` (named, but not in Streamlit's font: it draws none of them either)."""
    return json.loads(MANIFEST.read_text())


def put_in(frontend: Path) -> bool:
    """Replace the icon font in ``frontend`` (a copy of Streamlit's static/) by the subset, under the same name, if
    it is the font the subset was made from; say whether it did."""
    font = font_in(frontend)
    if font is None:
        return False
    made = manifest()
    if sha256(font) != made["source_sha256"] or sha256(SUBSET) != made["sha256"]:
        print(f"deploy/icon_font.py: {font.name} is not the font the subset was made from ({made['source']}): whole")
        return False
    font.write_bytes(SUBSET.read_bytes())
    return True


def ligatures(font) -> dict[str, str]:
    """A fontTools font's ligatures: the text (``expand_more``) -> the glyph it is drawn as."""
    letters = {glyph: chr(code) for code, glyph in font.getBestCmap().items()}
    found: dict[str, str] = {}
    for lookup in font["GSUB"].table.LookupList.Lookup:
        for table in lookup.SubTable:
            table = table.ExtSubTable if lookup.LookupType == 7 else table
            for first, rules in getattr(table, "ligatures", {}).items():
                for rule in rules:
                    found["".join(letters[g] for g in [first, *rule.Component])] = rule.LigGlyph
    return found


def make() -> dict:
    """Write the subset and its manifest from the installed Streamlit's font (fontTools and brotli needed)."""
    import brotli
    import fontTools
    from fontTools import subset
    from fontTools.ttLib import TTFont

    source = font_in(STREAMLIT / "static")
    font = TTFont(source, recalcTimestamp=False)  # the same bytes from the same font, whenever it is made
    glyph_of = ligatures(font)
    named = streamlit_icons() | app_icons()
    kept = sorted(named & glyph_of.keys())
    options = subset.Options(layout_closure=False, layout_features=["*"], name_IDs=["*"], flavor="woff2")
    subsetter = subset.Subsetter(options)  # the icons' glyphs and the letters they are typed with, nothing else
    subsetter.populate(glyphs=sorted({glyph_of[name] for name in kept}), text="".join(sorted(set("".join(kept)))))
    subsetter.subset(font)
    SUBSET.parent.mkdir(exist_ok=True)
    font.save(SUBSET)
    made = {
        "source": source.name,
        "source_sha256": sha256(source),
        "sha256": sha256(SUBSET),
        "made_with": {"fonttools": fontTools.version, "brotli": brotli.__version__},
        "icons": kept,
        "absent": sorted(named - glyph_of.keys()),
    }
    MANIFEST.write_text(json.dumps(made, indent=1) + "\n")
    return made


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))  # attention_views, for the navigation's icons
    made = make()
    print(f"{SUBSET}: {SUBSET.stat().st_size} bytes, {len(made['icons'])} icons; not in the font: {made['absent']}")

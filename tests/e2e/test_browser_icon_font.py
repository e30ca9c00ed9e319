"""The icon font nginx sends in place of Streamlit's (deploy/icon_font.py) draws every icon it keeps exactly as
Streamlit's own font does, in Chromium: the same pixels on a canvas; an icon it left out is drawn otherwise (as its
name's letters), so the comparison can tell them apart."""

from __future__ import annotations

import base64

import pytest

from deploy import icon_font

pytestmark = pytest.mark.e2e

DRAW = """
async ({ full, subset, icons }) => {
  const bytes = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)).buffer;
  for (const [family, data] of [["Full", full], ["Subset", subset]]) {
    document.fonts.add(await new FontFace(family, bytes(data)).load());
  }
  const canvas = document.createElement("canvas");
  canvas.width = 1200; canvas.height = 64;
  const g = canvas.getContext("2d", { willReadFrequently: true });
  const drawn = (family, text) => {
    g.clearRect(0, 0, canvas.width, canvas.height);
    g.font = `48px ${family}`;
    g.fillText(text, 4, 52);
    const pixels = g.getImageData(0, 0, canvas.width, canvas.height).data;
    let sum = 0, ink = 0;
    for (let i = 3; i < pixels.length; i += 4) { sum = (sum * 31 + pixels[i]) >>> 0; ink += pixels[i] > 0; }
    return { sum, ink, width: g.measureText(text).width };
  };
  return icons.map((icon) => [icon, drawn("Full", icon), drawn("Subset", icon)]);
}
"""


def drawn(browser, icons: list[str]) -> list:
    page = browser.new_page()
    try:
        page.set_content("<!doctype html><body>")
        fonts = {
            "full": base64.b64encode(icon_font.font_in(icon_font.STREAMLIT / "static").read_bytes()).decode(),
            "subset": base64.b64encode(icon_font.SUBSET.read_bytes()).decode(),
        }
        return page.evaluate(DRAW, {**fonts, "icons": icons})
    finally:
        page.close()


def one_em(drawing: dict) -> bool:
    return abs(drawing["width"] - 48) < 0.01  # 48 px, the font size: one glyph, the ligature's


def test_every_icon_the_subset_keeps_is_drawn_as_streamlits_font_draws_it(browser):
    kept = icon_font.manifest()["icons"]
    results = drawn(browser, kept)
    differ = [icon for icon, full, subset in results if full != subset]
    assert not differ, f"drawn otherwise by the subset: {differ}"
    assert all(full["ink"] > 0 and one_em(full) for _, full, _ in results), "each an icon one em wide"


def test_an_icon_left_out_is_drawn_otherwise(browser):
    kept = set(icon_font.manifest()["icons"])
    left_out = [icon for icon in ("rocket_launch", "pets", "eco") if icon not in kept]
    for icon, full, subset in drawn(browser, left_out):
        assert one_em(full) and subset != full and not one_em(subset), icon

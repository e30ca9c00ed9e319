"""The page list has one source (pure/navigation.py): every page it names has its file, the widget-key prefixes
are its pages', and every lecture opens on one of its pages."""

from pathlib import Path

import attention_core as ac
from attention_views.pure.navigation import NATURAL_PAGE, NAVIGATION, PAGE_PREFIXES, PAGES

ROOT = Path(__file__).resolve().parents[2]


def test_every_page_of_the_navigation_has_its_file_and_every_page_file_is_in_the_navigation():
    assert sorted(PAGES) == sorted(p.stem for p in (ROOT / "pages").glob("*.py"))
    assert len(set(PAGES)) == len(PAGES) == sum(len(entries) for entries in NAVIGATION.values())


def test_every_lecture_opens_on_a_page_of_the_navigation():
    assert set(NATURAL_PAGE.values()) <= set(PAGES), set(NATURAL_PAGE.values()) - set(PAGES)
    assert set(NATURAL_PAGE) <= set(ac.list_scenarios()), set(NATURAL_PAGE) - set(ac.list_scenarios())


def test_every_page_has_its_widget_key_prefix():
    assert sorted(PAGE_PREFIXES) == sorted(f"{page}_" for page in PAGES)

"""User text shown literally: formats.plain for Streamlit markdown, formats.plot_text for plotly."""

import re

import pytest

from attention_views.pure import figures
from attention_views.pure.formats import WORD_JOINER, plain, plot_text

HOSTILE = [
    "[x](http://example.com)",
    "![](http://example.com/a.png)",
    '<a href="http://example.com">x</a>',
    "<b>bold</b>",
    r"$\href{http://example.com}{x}$",
    "**strong** _em_ `code` ~~del~~ :red[red] :material/home:",
    "www.example.com and a@example.com",
    "# heading",
    "1. item",
    "- item",
]


def _unescape(text: str) -> str:
    """What CommonMark shows for ``text``: every backslash-escaped punctuation mark as itself."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", text).replace(WORD_JOINER, "")


@pytest.mark.parametrize("label", HOSTILE)
def test_plain_escapes_every_markup_start_and_reads_back_as_typed(label):
    out = plain(label)
    assert _unescape(out) == label
    assert not re.search(r"(?<!\\)[\[\]<>$`*~|!#]", out), out  # nothing that starts markup is left bare
    assert "://" not in out and "www." not in out.lower() and "@e" not in out  # no autolink is found


def test_plain_keeps_ordinary_messages_readable():
    message = "Q row 8 ('friend'), column 'Noun' is 'abc', not a number; type a finite number there (tab W_K)"
    assert plain(message) == message
    assert plain("two\nlines") == "two lines"


def test_plot_text_escapes_plotly_html_and_figures_use_it():
    assert plot_text('<a href="x">&</a>') == '&lt;a href="x"&gt;&amp;&lt;/a&gt;'
    fig = figures.attention_heatmap([[1.0]], ["<b>q</b>"], ["<a href='http://example.com'>k</a>"])
    text = str(fig.to_dict())
    assert "<b>q</b>" not in text and "<a href" not in text
    assert "&lt;b&gt;q&lt;/b&gt;" in text


def test_messages_name_the_projection_tables_as_the_pages_do():
    from attention_views.pure.formats import message

    shown = message("W_k row 1 ('d1'), column 'k2' is 'abc'; X · W_q overflowed; W_o; W_q1; not_W_q")
    assert shown == "W_K row 1 ('d1'), column 'k2' is 'abc'; X · W_Q overflowed; W_O; W_Q1; not_W_q"

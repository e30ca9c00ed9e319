"""Hostile user text, and how to tell that a page showed it as text: one list for the page, browser and fuzz tests.

Every string here is something a student, a link or an uploaded file can put where the app shows user text:
token labels, dimension labels (column headers), head names, the similarity page's vector names, the real
model's typed text. Markdown, LaTeX, Streamlit's directives and plotly's HTML subset would each turn some of
them into a link, an image fetched from outside, a colour, a formula or bold text.
"""

from __future__ import annotations

import html
import json
import re
from itertools import cycle, islice

from streamlit.testing.v1 import AppTest

from attention_views.pure import links
from attention_views.pure.lab import Lab, new_lab
from attention_views.pure.tables import TOKEN
from attention_views.ui.a11y import PAGE_SCRIPT

# (text, what markdown would make of it unescaped; None: it holds no markup)
_HOSTILE = (
    ("[x](http://evil.example/a)", "a link"),
    ("![i](http://evil.example/i.png)", "an image fetched from outside"),
    ('<a href="http://evil.example">a</a>', "an HTML link"),
    ("<img src=http://evil.example/p.png>", "an HTML image"),
    ("<b>bold</b>", "bold text"),
    (r"$\href{http://evil.example}{L}$", "a LaTeX link"),
    (":red[red] :material/home:", "a colour and an icon"),
    ("[j](javascript:alert(1))", "a script link"),
    ("[d](data:text/html,hi)", "a data link"),
    ("**strong** _em_ `code`", "emphasis and code"),
    ("www.evil.example a@evil.example", "autolinks"),
    ("W" * 100, None),  # a very long word: the longest label a link or file keeps (links.MAX_LABEL_CHARS)
    ("\u202eRTL override", None),
    ("zero\u200bwidth\u200djoin", None),
    ("e\u0301\u0308 combining", None),
    ("# heading", "a heading, at the start of a text"),
)
HOSTILE = tuple(text for text, _ in _HOSTILE)
MODEL_TEXT = "[x](http://evil.example) <b>b</b> $x$ :red[r]"  # the real model's typed text
# the strings that markdown would show as something else than their characters: a fixed list, written here
MARKUP = tuple(text for text, becomes in _HOSTILE if becomes) + (MODEL_TEXT,)
LONE_SURROGATE = "lone \ud800 half"  # a link's JSON can carry one; the app shows it as "lone ? half"

# Markup that can only come from user text left unescaped: the app's own text never holds these.
_LIVE_MARKUP = re.compile(
    r"(?<!\\)\]\((?:https?|javascript|data)"  # a link or image target
    r"|(?<!\\)!\[(?!\\)"  # an image
    r"|(?<!\\)<(?:a\s|img\b|b>|script)"  # a tag
    r"|(?<!\\)\$\\href"  # a LaTeX link
    r"|:red\["  # a colour directive (escaped, the bracket is \[)
    r"|(?:https?://|www\.)evil|@evil"  # an autolink (plain splits these with a word joiner)
)


# the markup strings, each found only where no backslash escapes its first character
_RAW = [(h, re.compile(r"(?<!\\)" + re.escape(h))) for h in MARKUP]


def live_markup(text: str) -> list[str]:
    """The pieces of ``text`` (Streamlit markdown) where user text would become markup: a raw hostile string,
    or a link, image, tag, formula, directive or autolink as only a hostile string brings."""
    raw = [h for h, unescaped in _RAW if h in text and unescaped.search(text)]
    return raw + [m.group() for m in _LIVE_MARKUP.finditer(text)]


INVISIBLE = "\u2060"  # the word joiner: no width, no glyph


def unescape(text: str) -> str:
    """What CommonMark shows for ``text``: each backslash-escaped ASCII punctuation mark as itself (CommonMark
    2.4), no word joiners (invisible)."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", text).replace(INVISIBLE, "")


def _labels(n: int, start: int = 0) -> list[str]:
    """``n`` distinct hostile labels (a number appended once the list runs out)."""
    base = list(islice(cycle(HOSTILE[start:] + HOSTILE[:start]), n))
    return [h if j < len(HOSTILE) else f"{h[:90]} {j}" for j, h in enumerate(base)]


def hostile_lab(scenario: str) -> Lab:
    """The scenario's lab with every user-controlled text hostile: token labels, column headers, the index of the
    projection tables, head names, the similarity page's vector names and columns, the real model's text."""
    lab = new_lab(scenario)
    for k, (name, frame) in enumerate(lab.tables.items()):
        frame = frame.copy()
        cols = [c for c in frame.columns if c != TOKEN]
        frame = frame.rename(columns=dict(zip(cols, _labels(len(cols), start=k + 3), strict=True)))
        if TOKEN in frame.columns:
            frame[TOKEN] = _labels(len(frame))
        else:
            frame.index = _labels(len(frame), start=k)
        lab.tables[name] = frame
    heads = [f"{h} {j}" for j, h in enumerate(_labels(len(lab.heads), start=2))]  # hostile, and no token's label
    lab.heads = lab.heads.assign(head=heads)
    vectors = lab.vectors.tables["vectors"].copy()
    vectors.index = [HOSTILE[0], HOSTILE[4]]
    vectors.columns = _labels(vectors.shape[1], start=5)
    lab.vectors.tables["vectors"] = vectors
    lab.model.text, lab.model.preset = MODEL_TEXT, "custom"
    return lab


def user_texts(lab: Lab) -> set[str]:
    """Every user-controlled text of ``lab``: token labels, column headers, row labels, head and vector names."""
    frames = [*lab.tables.values(), lab.vectors.tables["vectors"]]
    texts = {str(c) for f in frames for c in f.columns if c != TOKEN}
    texts |= {str(t) for f in frames for t in (f[TOKEN] if TOKEN in f.columns else f.index)}
    return texts | set(lab.heads["head"]) | {lab.model.text}


def hostile_link_state(lab: Lab, page: str) -> str:
    """The ``?state=`` token of ``lab``, with the last token label of its first token table a lone surrogate (a
    link's JSON can say ``\\ud800``; a DataFrame of text cannot even hold one, so it goes into the payload)."""
    payload = links.lab_payload(lab, page, full=True)
    table = next(t for t in payload["t"].values() if t["tok"])
    table["rows"][-1] = LONE_SURROGATE
    return links.encode_payload(payload)


def strings(value: object) -> list[str]:
    """Every string inside a JSON value (a plotly figure's spec), keys left out."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def live_plot_markup(spec: str) -> list[str]:
    """Raw HTML from a hostile string in a plotly figure's text (plotly draws ``<a href>``, ``<b>``, images)."""
    texts = strings(json.loads(spec))
    raw = [h for h in (*HOSTILE, MODEL_TEXT) if "<" in h for t in texts if h in t]
    return raw + [m.group() for t in texts for m in re.finditer(r"<(?:a\s|img\b|script)", t)]


# ---- what AppTest shows: every markdown-bearing text of a page ----

LITERAL = {"code", "text"}  # st.code and st.text show their text as it is
PLAIN_TEXT_FIELDS = {  # widget fields shown as plain text (an input's value, a select box's options)
    "selectbox": {"options", "raw_value", "default"},
    "multiselect": {"options", "raw_value", "default"},
    "text_input": {"value", "default", "placeholder"},
    "text_area": {"value", "default", "placeholder"},
    # an element's accessible name: an attribute (aria-label), never markdown
    "plotly_chart": {"alt"},
    "dataframe": {"alt"},
    "table": {"alt"},
}
NOT_TEXT = {"id", "form_id", "spec", "config", "columns", "data", "deferred_file_id", "icon", "tag", "format", "type"}


def _nodes(node):
    yield node
    for k in sorted(getattr(node, "children", None) or {}):
        yield from _nodes(node.children[k])


def _proto_strings(message, skip: set[str]) -> list[tuple[str, str]]:
    """(field, text) for every string in a proto message and its sub-messages, but the fields in ``skip``."""
    out = []
    for field, value in message.ListFields():
        if field.name in skip or field.name in NOT_TEXT:
            continue
        values = value if isinstance(value, (list, tuple)) or type(value).__name__.startswith("Repeated") else [value]
        for v in values:
            if isinstance(v, str):
                out.append((field.name, v))
            elif hasattr(v, "ListFields"):
                out += [(f"{field.name}.{f}", t) for f, t in _proto_strings(v, skip)]
    return out


def shown_texts(at: AppTest) -> list[tuple[str, str]]:
    """(where, text) for every text Streamlit renders as markdown, in the main area and the sidebar. A custom
    component's data is not markdown (the app's components set text as textContent; a figure's, :func:`_specs`,
    is checked as plotly's)."""
    out = []
    for node in _nodes(at._tree):
        proto = getattr(node, "proto", None)
        if proto is None or node.type in LITERAL or node.type == "bidi_component" or not hasattr(proto, "ListFields"):
            continue
        if node.type == "html" and proto.body == PAGE_SCRIPT:  # the app's own script (ui/a11y.py): no user text
            continue
        out += [(f"{node.type}.{f}", t) for f, t in _proto_strings(proto, PLAIN_TEXT_FIELDS.get(node.type, set()))]
    return out


def markup_problems(at: AppTest) -> list[str]:
    problems = [f"{where}: {hit!r} in {text[:200]!r}" for where, text in shown_texts(at) for hit in live_markup(text)]
    for spec in _specs(at):
        problems += [f"plotly figure: raw {hit!r}" for hit in live_plot_markup(spec)]
    return problems


def _specs(at: AppTest) -> list[str]:
    """The JSON of every plotly figure on the page: st.plotly_chart's, and those drawn in place
    (ui/components/figure.py's component, its data's ``spec``)."""
    out = []
    for node in _nodes(at._tree):
        if node.type == "plotly_chart":
            out.append(node.proto.spec)
        elif node.type == "bidi_component" and node.proto.component_name == "attention_lab.figure":
            out.append(json.loads(node.proto.json)["spec"])
    return out


def _widget_texts(at: AppTest) -> list[str]:
    """The plain-text fields of widgets (an input's value, a select box's options), which show as they are."""
    out = []
    for node in _nodes(at._tree):
        fields = PLAIN_TEXT_FIELDS.get(node.type, set())
        if fields and getattr(node, "proto", None) is not None:
            out += [t for f, t in _proto_strings(node.proto, set()) if f.split(".")[0] in fields]
    return out


def read_texts(at: AppTest) -> list[str]:
    """Every text of the page as a person reads it: markdown as CommonMark shows it (:func:`unescape`), widget
    values and options as they are."""
    return [unescape(t) for _, t in shown_texts(at)] + _widget_texts(at)


def chart_texts(at: AppTest) -> list[str]:
    """Every string of every plotly figure on the page as plotly.js draws it: HTML entities decoded."""
    return [html.unescape(s) for spec in _specs(at) for s in strings(json.loads(spec))]

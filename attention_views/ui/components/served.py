"""A component's code served as a file: ``st.components.v2`` sends a component's inline JS with its element on every
run (for a following phone, on every lecturer edit), so the app's components register ``loader.js`` instead, a few
hundred bytes that import the component's module from the app's static folder once a page (a URL holding the
file's hash, so the browser keeps it). The loader calls the module's default export with each of Streamlit's calls;
the calls made before the module has arrived are replayed then, the latest of each element."""

from pathlib import Path

from attention_views.ui import static

FOLDER = "components"
HERE = Path(__file__).parent
LOADER = HERE / "loader.js"
MODULES = tuple(sorted(set(HERE.glob("*.js")) - {LOADER}))  # every component's module: the folder's other scripts


def served(module: Path) -> str:
    """The inline JS that runs the ES module ``module`` (one of :data:`MODULES`; its default export is the
    component's function) from the app's static folder."""
    return LOADER.read_text().replace("__MODULE__", url(module))


def url(module: Path) -> str:
    """The URL of ``module``, relative to a page, published in ``static/components/`` under its hashed name."""
    return static.publish(module, FOLDER, hashed=True)

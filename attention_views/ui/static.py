"""The app's static folder: Streamlit serves ``static/`` at the app's root as ``app/static/``
(``server.enableStaticServing`` in .streamlit/config.toml); the class signals and plotly.js are written there."""

from pathlib import Path

FOLDER = Path(__file__).resolve().parents[2] / "static"
URL = "app/static"  # relative to a page, under the app's base path

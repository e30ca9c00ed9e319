"""The app's own Streamlit components (st.components.v2): HTML, CSS and JS next to the Python that mounts them."""


def publish() -> list[str]:
    """Write every file the components load from the app's static folder (plotly.js, the components' modules), as
    their first use would; the Docker image does it at build time, where the app may not write there. Their URLs."""
    from attention_views.ui.components import figure, served

    return [figure.plotly_js(), *map(served.url, served.MODULES)]

"""The app's own Streamlit components (st.components.v2): HTML, CSS and JS next to the Python that mounts them."""

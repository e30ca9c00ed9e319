"""Read-only tables of numbers as a page shows them (st.dataframe with one decimal convention), the Arrow tables
they are sent as, and their CSV download."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import streamlit as st

from attention_views.pure.tables import (
    TOKEN,
    csv_text,
)


def number_table(
    table: pd.DataFrame | pa.Table,
    key: str,
    decimals: int = 3,
    help: Mapping[str, str] | None = None,
    alt: str | None = None,
) -> None:
    """A read-only table whose decimal columns all show ``decimals`` places (Streamlit's default drops trailing
    zeros, so 0.5280 read 0.528 beside 0.8421): one decimal convention for every number table. ``help``: a
    tooltip for some column headers (short headers keep every column in sight). No column has a fixed width: the
    browser sizes each to its header and values, so a header that names a token ("weight on Emma") or a long
    dimension label shows whole, and a table too wide for its place scrolls sideways. ``alt``: the grid's
    accessible name (the label shown above it).

    The numbers are sent rounded to ``decimals`` places, as they are shown: a screen reader reads the value sent,
    which would otherwise say "-1.2689903643825624e-17" for a cell showing "-0.000"."""
    help = help or {}
    table = arrow_table(table) if isinstance(table, pd.DataFrame) else table
    table = shown_as(table, decimals)
    fixed = {
        f.name: st.column_config.NumberColumn(format=f"%.{decimals}f", help=help.get(f.name))
        for f in table.schema  # a name may repeat: a head's dims "1, 1"
        if pa.types.is_floating(f.type)
    }
    st.dataframe(table, hide_index=True, key=key, column_config=fixed, width="content", alt=alt)


def shown_as(table: pa.Table, decimals: int) -> pa.Table:
    """``table`` with every decimal column rounded to ``decimals`` places, never -0.0: the numbers as shown."""
    columns = [
        pc.add(pc.round(column, decimals), 0.0) if pa.types.is_floating(column.type) else column
        for column in table.columns
    ]
    return pa.Table.from_arrays(columns, names=table.column_names)


def arrow_table(frame: pd.DataFrame) -> pa.Table:
    """``frame``'s columns as the Arrow table st.dataframe sends, for a table shown without its index.

    The schema and values are those of Streamlit's own conversion (``pa.Table.from_pandas``: NaN as null,
    repeated column names kept); what is left out is the pandas index and its metadata, which a table shown
    without its index does not need."""
    columns = [pa.array(column, from_pandas=True) for _, column in frame.items()]
    return pa.Table.from_arrays(columns, names=[str(c) for c in frame.columns])


def columns_table(columns: Mapping[str, object]) -> pa.Table:
    """Columns (name -> texts, or numbers in a list or NumPy array) as the Arrow table :func:`arrow_table` makes
    of their DataFrame (texts as large strings, NaN as null), without making the DataFrame."""
    return pa.Table.from_arrays([_arrow_column(v) for v in columns.values()], names=list(columns))


def numbers_arrow(M: np.ndarray, rows: list[str], cols: list[str]) -> pa.Table:
    """:func:`numbers_frame`'s table made as Arrow directly, as :func:`columns_table` does (a name may repeat)."""
    columns = [_arrow_column(rows), *(_arrow_column(M[:, j]) for j in range(M.shape[1]))]
    return pa.Table.from_arrays(columns, names=[TOKEN, *map(str, cols)])


def _arrow_column(values: object) -> pa.Array:
    column = pa.array(values, from_pandas=True)
    return column.cast(pa.large_string()) if column.type == pa.string() else column


def numbers_frame(M: object, rows: list[str], cols: list[str]) -> pd.DataFrame:
    """A read-only table of numbers for st.dataframe (labels may repeat, so they go in a column)."""
    frame = pd.DataFrame(M, columns=cols)
    frame.insert(0, TOKEN, rows)
    return frame


def csv_download(label: str, table: Callable[[], pd.DataFrame], file_name: str, key: str) -> None:
    """A download button for a result table as CSV; ``table`` makes the table, on click."""
    st.download_button(
        label,
        lambda: csv_text(table(), index=False),
        file_name=file_name,
        mime="text/csv",
        key=key,
        icon=":material/download:",
    )  # written on click

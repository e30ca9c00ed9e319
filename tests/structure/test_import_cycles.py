"""No module of the product imports another that imports it back, whether at import time, inside a function or
only for typing: every ``import`` statement of every module counts, wherever it stands in the file."""

from __future__ import annotations

from pathlib import Path

from tests.import_statements import ROOT, module_name, named_modules

PACKAGES = ("attention_core", "attention_views", "attention_models")


def product_modules() -> dict[str, Path]:
    return {module_name(p): p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))}


def imported(path: Path, name: str, known: set[str]) -> set[str]:
    """The product modules among those ``path`` (the module ``name``) names in any import statement, itself left
    out."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    return {m for m in named_modules(path, package) if m in known and m != name}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def import_graph() -> dict[str, set[str]]:
    modules = product_modules()
    graph = {name: imported(path, name, set(modules)) for name, path in modules.items()}
    # a package's __init__ re-exporting its modules is not an import back: a module importing its own package
    # (``from attention_views import figures``) reaches the package's other modules only through the edge below
    return {
        name: {m for m in targets if not (name.startswith(m + ".") and modules[m].name == "__init__.py")}
        for name, targets in graph.items()
    }


def test_the_finder_sees_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_finder_reads_every_kind_of_import(tmp_path):
    module = tmp_path / "m.py"
    module.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from p import q\n"
        "def f():\n    import p.r\n    from . import s\n"
    )
    assert imported(module, "p.m", {"p.q", "p.r", "p.s", "p"}) == {"p", "p.q", "p.r", "p.s"}


def test_no_product_module_imports_one_that_imports_it_back():
    assert cycles(import_graph()) == []

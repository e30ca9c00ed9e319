"""What a product module's import statements name, read from its source: the one reader the structure tests share
(no import cycles, a pure part that never imports Streamlit)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def module_name(path: Path) -> str:
    """``attention_views/pure/lab.py`` -> ``attention_views.pure.lab`` (a package's ``__init__`` is the package)."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_of(path: Path) -> str:
    """The package a relative import in ``path`` starts from ("" for a file outside the repository)."""
    if not path.resolve().is_relative_to(ROOT):
        return ""
    name = module_name(path)
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def named_modules(path: Path, package: str | None = None) -> set[str]:
    """Every module an import statement of the file names, at any depth (inside functions, under TYPE_CHECKING),
    with the names a ``from`` import takes (``from p import m`` names ``p`` and ``p.m``); relative imports are
    resolved against ``package`` (by default the file's own)."""
    package = package_of(path) if package is None else package
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found |= {f"{base}.{alias.name}" for alias in node.names}
    return found

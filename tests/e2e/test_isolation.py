"""Sessions never share state: two browsers on one server, and a static check for module-level state.

Streamlit runs every browser tab's session in one process, so anything kept at module level in the
app's own modules (a dict filled at run time, a ``global``) would leak one student's edits into
another's view. Two checks:

- ``test_two_sessions_*``: two concurrent Playwright contexts (two fresh sessions) on the server of
  the e2e fixtures. Edits in one (mask set to causal, temperature moved with the keyboard, scenario
  switched) never appear in the other, and "Reset scenario" in one leaves the other's edits untouched.
- ``test_no_module_level_mutable_state``: reads the app's own modules (app.py, pages/,
  attention_views/, attention_core/) with ``ast`` and fails, naming file:line, on any ``global`` or
  ``nonlocal`` statement, any module-level (or class-level) dict/list/set/array that is mutated
  anywhere, any lower-case module-level mutable container (only UPPERCASE constants never mutated
  may be mutable), any write to an attribute or item of an imported object (process-wide state,
  e.g. a library's class attribute) other than the per-session ``st.session_state`` and
  ``st.query_params``, and ``st.cache_resource`` (one object shared by every session). Page scripts
  are executed in a fresh module namespace on every run, so their own top-level names are per run
  and only their writes to imported objects count. Known limits: a mutation through a local alias
  (``d = TABLE; d[k] = v``) or inside a callee from another package is not seen.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest
from streamlit_browser import (
    assert_clean,
    chart,
    choose_option,
    new_context,
    open_page,
    pick_sidebar_scenario,
    wait_idle,
    wait_until,
)

import attention_core as ac

ROOT = Path(__file__).resolve().parents[2]
HEATMAP = "playground_heatmap"

# ---- two sessions in one browser ------------------------------------------------------------------


@pytest.fixture
def two_pages(browser, app_url):
    """Two independent browser contexts (two Streamlit sessions) on the same server, open at once."""
    contexts = [new_context(browser, app_url) for _ in range(2)]
    yield [context.new_page() for context in contexts]
    for context in contexts:
        context.close()


def weights(page) -> list[list[float]] | None:
    fig = chart(page, HEATMAP)
    return fig["z"] if fig else None


SLIDER = ".st-key-playground_temperature input[type=range]"  # the slider thumb's keyboard input


def temperature(page) -> float:
    return float(page.locator(SLIDER).input_value())


def nudge_temperature(page, presses: int) -> float:
    """Move the temperature slider with the keyboard (focus the thumb, arrow keys) and wait for the rerun."""
    before = temperature(page)
    page.locator(SLIDER).focus()
    for _ in range(abs(presses)):
        page.keyboard.press("ArrowRight" if presses > 0 else "ArrowLeft")
    wait_until(page, lambda: temperature(page) != before, "the temperature slider to move", 20)
    wait_idle(page)
    return temperature(page)


def rerun_by_stage(page) -> None:
    """Make this session run its script twice without touching the lab's tables: show the scaled
    scores, then the weights again (so its own lab is read back from its session state)."""
    stage = page.locator(".st-key-playground_stage")
    for label in ("Scaled", "Weights"):
        stage.get_by_text(label, exact=True).click()
        wait_idle(page)


def shows(page, expected: list[list[float]]) -> bool:
    """True once the page's heatmap holds ``expected`` (given 10 s to redraw), else False."""
    return bool(wait_until(page, lambda: weights(page) == expected, "the heatmap", 10, required=False))


def upper_triangle_zero(z: list[list[float]]) -> bool:
    return all(not z[i][j] for i in range(len(z)) for j in range(i + 1, len(z[i])))


def open_playground(page, scenario: str) -> list[list[float]]:
    open_page(page, f"/playground?scenario={scenario}")
    z = wait_until(page, lambda: weights(page), f"the playground heatmap of {scenario}")
    assert_clean(page)
    return z


@pytest.mark.e2e
def test_two_sessions_edits_scenario_and_reset_in_one_never_reach_the_other(two_pages):
    """One story in two sessions: A's mask and temperature, then B's scenario switch and temperature, then A's
    Reset; each time the other session, made to run its script again, still shows its own lab."""
    a, b = two_pages
    a0, b0 = open_playground(a, "emma-friend"), open_playground(b, "emma-friend")
    assert a0 == b0 and not upper_triangle_zero(a0), "both sessions open on the same pristine scenario"

    choose_option(a, "playground_mask", "causal")
    a_causal = wait_until(a, lambda: (z := weights(a)) and upper_triangle_zero(z) and z, "A's causal weights", 20)
    t_a = nudge_temperature(a, 5)
    a_edited = wait_until(a, lambda: (z := weights(a)) and z != a_causal and z, "A's heatmap after temperature", 20)
    assert t_a != 1.0 and upper_triangle_zero(a_edited)

    rerun_by_stage(b)  # B runs its script again: it must still see its own lab
    assert shows(b, b0), "session B's weights changed after edits in session A"
    assert temperature(b) == 1.0, f"session B's temperature is {temperature(b)} after A moved its own"
    assert_clean(b)

    pick_sidebar_scenario(b, scenario_title("mammal-query"))
    b_mammal = wait_until(b, lambda: (z := weights(b)) and len(z) == 2 and z, "B's mammal-query heatmap (2 x 5)", 20)
    rerun_by_stage(a)
    assert shows(a, a_edited), "session A's weights changed when B switched scenario"
    assert len(weights(a)) == 9 and temperature(a) == t_a
    assert b_mammal and len(b_mammal[0]) == 5

    t_b = nudge_temperature(b, 8)  # B's own edit, which A's reset must not undo
    b_edited = wait_until(b, lambda: (z := weights(b)) and z != b_mammal and z, "B's heatmap after its temperature", 20)
    a.get_by_role("button", name="Reset scenario").click()
    wait_idle(a)
    wait_until(a, lambda: weights(a) == a0, "A's heatmap back to the pristine scenario after Reset", 20)
    assert temperature(a) == 1.0

    rerun_by_stage(b)
    assert temperature(b) == t_b != 1.0, f"B's temperature {temperature(b)} changed when A pressed Reset (was {t_b})"
    assert shows(b, b_edited), "B's weights changed when A pressed Reset"
    assert_clean(a)
    assert_clean(b)


def scenario_title(scenario_id: str) -> str:
    """The sidebar title of a scenario, as the app's own cards name it."""
    return ac.load_scenario(scenario_id).title


# ---- no module-level mutable state ----------------------------------------------------------------

SOURCES = ("app.py", "pages", "attention_views", "attention_views/pure", "attention_views/ui", "attention_core")
MUTATORS = {
    "append",
    "extend",
    "insert",
    "remove",
    "pop",
    "popitem",
    "clear",
    "update",
    "setdefault",
    "add",
    "discard",
    "sort",
    "reverse",
    "fill",
    "resize",
    "put",
    "itemset",
    "appendleft",
    "extendleft",
    "__setitem__",
    "__delitem__",
    "difference_update",
    "intersection_update",
    "symmetric_difference_update",
}
MUTABLE_CALLS = {
    "dict",
    "list",
    "set",
    "defaultdict",
    "OrderedDict",
    "Counter",
    "deque",
    "bytearray",
    "array",
    "zeros",
    "ones",
    "empty",
    "full",
    "eye",
    "arange",
    "unique",
    "geomspace",
    "linspace",
    "DataFrame",
    "Series",
    "SimpleNamespace",
}
PER_SESSION = ("st.session_state", "st.query_params")  # Streamlit's per-session proxies
# Writes to shared objects that are deliberate, with the reason. Key: "file: dotted target".
ALLOWED = {
    "attention_views/ui/streamlit_compat.py: PagesManager.uses_pages_directory": (
        "Streamlit's own process-wide pages-folder flag, only ever set to False (the same for every session, "
        "as st.navigation itself does); it carries no session's data"
    ),
    "attention_views/ui/class_store.py: st.cache_resource": (
        "the process's connection to the class store: a class is shared on purpose, and its rooms live in the store "
        "(SQLite or Redis), never in this object"
    ),
    "attention_views/ui/classroom.py: st.cache_resource": (
        "the process's class watcher: which rooms its students follow (a cache of the store's truth) and the signal "
        "files it writes; no session's state"
    ),
}


@dataclass
class Finding:
    where: str
    what: str

    def __str__(self) -> str:
        return f"{self.where}: {self.what}"


def app_modules() -> list[Path]:
    files = []
    for entry in SOURCES:
        path = ROOT / entry
        files += [path] if path.is_file() else sorted(path.glob("*.py"))
    return files


def dotted(node: ast.AST) -> str:
    """'a.b.c' for a Name/Attribute chain (subscripts read as their base), else ''."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr}" if base else ""
    if isinstance(node, ast.Subscript):
        return dotted(node.value)
    if isinstance(node, ast.Call):
        return dotted(node.func) + "()" if dotted(node.func) else ""
    return ""


def is_mutable_value(node: ast.AST) -> bool:
    if isinstance(node, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)):
        return True
    if isinstance(node, ast.Call):
        name = dotted(node.func).split(".")[-1]
        return name in MUTABLE_CALLS
    return False


def is_constant_name(name: str) -> bool:
    bare = name.strip("_")
    return name == "__all__" or (bare.isupper() and bare.replace("_", "").isalnum())


def module_bindings(tree: ast.Module) -> dict[str, tuple[int, ast.AST | None]]:
    """Names bound at module level (outside def/class), with the line and value of their binding."""
    out: dict[str, tuple[int, ast.AST | None]] = {}

    def visit(stmts: list[ast.stmt]) -> None:
        for stmt in stmts:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.setdefault(stmt.name, (stmt.lineno, None))
                continue
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                for alias in stmt.names:
                    out.setdefault((alias.asname or alias.name).split(".")[0], (stmt.lineno, None))
                continue
            targets = (
                stmt.targets
                if isinstance(stmt, ast.Assign)
                else [stmt.target]
                if isinstance(stmt, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor))
                else []
            )
            value = getattr(stmt, "value", None)
            for target in targets:  # names bound by the statement (not the base of `x[i] = ...`)
                for name in target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]:
                    if isinstance(name, ast.Name):
                        out[name.id] = (stmt.lineno, value if name is target else None)
            for field in ("body", "orelse", "finalbody", "handlers"):
                block = getattr(stmt, field, None)
                if isinstance(block, list):
                    visit(
                        [s for s in block if isinstance(s, ast.stmt)]
                        + [s for h in block if isinstance(h, ast.ExceptHandler) for s in h.body]
                    )

    visit(tree.body)
    return out


def imported_names(tree: ast.Module, modules_only: bool = False) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) or (isinstance(node, ast.ImportFrom) and not modules_only):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    return names


def local_names(func: ast.AST) -> set[str]:
    """Names a function binds itself (parameters, assignments, loop and with targets, imports)."""
    names = set()
    args = func.args
    for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
        if arg is not None:
            names.add(arg.arg)
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return names


def writes(tree: ast.Module):
    """(node, base name, dotted target, kind) for every in-place write: item/attribute stores, augmented
    assignments to them, mutating method calls and ``del x[...]``; with the function scope it is in."""

    def scan(node: ast.AST, scope: ast.AST | None):
        for child in ast.iter_child_nodes(node):
            inner = child if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) else scope
            targets = []
            if isinstance(child, (ast.Assign, ast.Delete)):
                targets = child.targets
            elif isinstance(child, (ast.AugAssign, ast.AnnAssign)):
                targets = [child.target]
            for target in targets:
                for t in target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]:
                    if isinstance(t, (ast.Subscript, ast.Attribute)):
                        yield t, dotted(t).split(".")[0], dotted(t), "item/attribute write", scope
                    elif isinstance(child, ast.AugAssign) and isinstance(t, ast.Name):
                        yield t, t.id, t.id, "augmented assignment", scope
            if isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute) and child.func.attr in MUTATORS:
                base = dotted(child.func.value)
                if base:
                    yield child, base.split(".")[0], base, f".{child.func.attr}()", scope
            yield from scan(child, inner)

    yield from scan(tree, None)


def check_module(path: Path, root: Path = ROOT, allowed_seen: set[str] | None = None) -> list[Finding]:
    rel = path.relative_to(root).as_posix()
    tree = ast.parse(path.read_text(), filename=rel)
    script = rel == "app.py" or rel.startswith("pages/")  # run in a fresh namespace on every rerun
    bindings, found = module_bindings(tree), []
    imported = {n for n in imported_names(tree) if bindings.get(n, (0, None))[1] is None}  # not re-bound by `=`
    modules = imported_names(tree, modules_only=True)

    for node in ast.walk(tree):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            found.append(Finding(f"{rel}:{node.lineno}", f"`{type(node).__name__.lower()} {', '.join(node.names)}`"))
        if isinstance(node, ast.Attribute) and dotted(node) in ("st.cache_resource", "streamlit.cache_resource"):
            key = f"{rel}: st.cache_resource"
            if key in ALLOWED and allowed_seen is not None:
                allowed_seen.add(key)
            if key not in ALLOWED:
                found.append(Finding(f"{rel}:{node.lineno}", "st.cache_resource: one object shared by every session"))
        if isinstance(node, ast.ClassDef):
            for stmt in node.body:
                if (
                    isinstance(stmt, (ast.Assign, ast.AnnAssign))
                    and stmt.value is not None
                    and is_mutable_value(stmt.value)
                ):
                    names = [
                        t.id
                        for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])
                        if isinstance(t, ast.Name)
                    ]
                    if not all(is_constant_name(n) for n in names):
                        found.append(
                            Finding(
                                f"{rel}:{stmt.lineno}",
                                f"class attribute {node.name}.{names} is a mutable container shared by every instance",
                            )
                        )

    mutated: dict[str, int] = {}
    for node, base, target, kind, scope in writes(tree):
        if target.startswith(PER_SESSION) or not base or "()" in target:  # a call's result is a new object
            continue
        if kind.startswith(".") and target == base and base in modules:  # np.sort(x): a function, not a method
            continue
        local = scope is not None and base in local_names(scope)
        if local:
            continue
        if base in imported:  # a write into an object another module owns: process-wide
            key = f"{rel}: {target}"
            if key in ALLOWED and allowed_seen is not None:
                allowed_seen.add(key)
            if key not in ALLOWED:
                found.append(
                    Finding(
                        f"{rel}:{node.lineno}",
                        f"{kind} on imported `{target}` (shared by every session of the process)",
                    )
                )
            continue
        if base in bindings and not (script and scope is None):
            mutated.setdefault(base, node.lineno)
            if not script:
                found.append(
                    Finding(
                        f"{rel}:{node.lineno}", f"{kind} on module-level `{target}` (bound at line {bindings[base][0]})"
                    )
                )

    if not script:
        for name, (line, value) in bindings.items():
            if value is not None and is_mutable_value(value) and not is_constant_name(name) and name not in mutated:
                found.append(
                    Finding(
                        f"{rel}:{line}",
                        f"module-level `{name}` is a mutable container; make it an "
                        "UPPERCASE constant (tuple, or a dict never written) or move it "
                        "into the session state",
                    )
                )
    return found


def test_no_module_level_mutable_state():
    files = app_modules()
    assert len(files) >= 10 and any(f.name == "controls.py" for f in files), [str(f) for f in files]
    seen: set[str] = set()
    findings = [finding for path in files for finding in check_module(path, allowed_seen=seen)]
    assert not findings, "module-level mutable state (shared by every session):\n" + "\n".join(map(str, findings))
    assert seen == set(ALLOWED), f"allow-list entries that no longer match any code: {set(ALLOWED) - seen}"


def test_the_static_check_finds_what_it_looks_for(tmp_path):
    """The check itself: each kind of shared state in a sample module is named with its line."""
    sample = tmp_path / "attention_views" / "sample.py"
    sample.parent.mkdir()
    sample.write_text(
        "import streamlit as st\n"
        "from somewhere import Thing\n"
        "HITS = {}\n"  # 3: an UPPERCASE dict, but written on line 8
        "seen = []\n"  # 4: lower-case list at module level
        "LIMITS = {'a': 1}\n"  # 5: a constant: fine
        "def f(key):\n"
        "    global COUNT\n"  # 7
        "    HITS[key] = 1\n"  # 8
        "    local = {}\n"
        "    local['x'] = 1\n"  # fine: a local
        "    st.session_state['x'] = LIMITS['a']\n"  # fine: per session
        "    Thing.flag = True\n"  # 12: a write into an imported class
        "@st.cache_resource\n"  # 13
        "def g():\n"
        "    return []\n"
    )
    found = [str(f) for f in check_module(sample, tmp_path)]
    expected_lines = {4, 7, 8, 12, 13}
    assert {int(f.split(":")[1]) for f in found} == expected_lines, found

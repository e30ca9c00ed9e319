// The data editors' edits, each taken into a rerun at once (st.components.v2, mounted on every run by frame.run).
// Streamlit's data editor waits 150 ms after an edit before it reruns the app; the app's table editors are drawn
// with on_change="ignore" (their keys are data.keys), so such an editor stores its edit at once (on a microtask)
// and asks for no rerun, and this asks for it: after each user action that can commit one of these grids' edits
// (Enter or Tab in a cell's editor, a click away from it but not Escape, Delete or Backspace on selected cells,
// paste or cut, a click on the editor's toolbar: add or delete rows), once the grid's own handlers have run. One
// action asks once; an action that committed nothing reruns an unchanged page. Other editors rerun the app
// themselves.
const GRID = '[data-testid="stDataFrame"]';
const TOOLBAR = '[data-testid="stElementToolbar"]';
const ONE_ACTION_MS = 50; // asks this close together are one action's (Enter, then the cell editor losing focus)

function inside(target, selector) {
  return target instanceof Element ? target.closest(selector) : null;
}

// True when `element` lies in the element of one of the editors this component reruns for.
function ours(state, element) {
  const box = element && element.closest('[data-testid="stElementContainer"]');
  return Boolean(box && [...box.classList].some((c) => c.startsWith("st-key-") && state.keys.has(c.slice(7))));
}

export default function ({ data, setTriggerValue }) {
  const state = (window.__labCommits ??= { send: null, keys: new Set(), grid: null, count: 0, last: -Infinity });
  state.send = setTriggerValue; // the latest run's
  state.keys = new Set((data && data.keys) || []);
  state.cellEditor = data && data.cellEditor; // the editor glide-data-grid opens over a cell (streamlit_compat)
  if (state.listening) return;
  state.listening = true;
  // `later`: the action's own handlers are still to run (a key press); a cell editor losing focus has been committed
  // already (the grid commits on the press, before the focus moves), and its rerun must leave before the press's
  // own action does (a page link's rerun), so it goes on a microtask
  const ask = (later = true) => {
    const now = performance.now();
    if (now - state.last < ONE_ACTION_MS) return;
    state.last = now;
    const send = () => {
      state.count += 1;
      state.send("commit", state.count);
    };
    if (later) setTimeout(send, 0); // after the grid's handlers and the editor's store
    else queueMicrotask(() => queueMicrotask(send)); // after the editor's store (a microtask)
  };
  const seen = (e) => {
    const grid = inside(e.target, GRID);
    if (grid) state.grid = grid; // the grid a cell's editor (drawn outside it, in #portal) belongs to
  };
  document.addEventListener("pointerdown", seen, true);
  document.addEventListener("focusin", seen, true);
  const cellEdit = (e) => inside(e.target, state.cellEditor) && ours(state, state.grid);
  const gridAction = (e) => ours(state, inside(e.target, GRID));
  document.addEventListener(
    "keydown",
    (e) => {
      if ((e.key === "Enter" || e.key === "Tab") && cellEdit(e)) ask();
      else if (e.key === "Escape" && cellEdit(e)) state.escaped = true; // the cell's editor closes, nothing kept
      else if ((e.key === "Delete" || e.key === "Backspace") && gridAction(e)) ask();
    },
    true,
  );
  document.addEventListener(
    "focusout",
    (e) => {
      if (!cellEdit(e)) return;
      if (state.escaped) state.escaped = false;
      else ask(false); // a click away: the grid keeps what was typed
    },
    true,
  );
  for (const kind of ["paste", "cut"]) document.addEventListener(kind, (e) => gridAction(e) && ask(), true);
  document.addEventListener("click", (e) => ours(state, inside(e.target, TOOLBAR)) && ask(), true);
}

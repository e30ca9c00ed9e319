// The vector plane (st.components.v2): queries and keys as arrows from the origin, the chosen query's weights.
// Streamlit calls this again with each new `data` and the same parentElement: the drawing is built once and kept
// on that element, and each call only updates attributes and text. Labels are user text: set as textContent only.
// Every weight shown is data.weight_text, printed by Python from attention_core; the drawing only moves the
// handle under the pointer (or by a key press) and reports its position as the state value "drag".
// Pacing: each report reruns the plane's fragment, which makes Streamlit render the page again, so a move is
// reported only when the weights ahead in hand (below) do not reach the pointer's point and where it will be
// LOOK_MS later, or once the pointer rests REST_MS (its point's answer then redraws the heatmap that follows).
// A report goes at once while fewer than IN_FLIGHT reports of the drag are unanswered (Python echoes the drag's
// id and the number `seq` of the report it computed as data.answered; Streamlit merges reports that arrive during
// a run, so one answer may cover several); otherwise the newest position waits for the next answer. The end of a
// drag is always reported, last, with done: true, so the tables get the drag's end.
// Weights ahead: while a drag runs, each answer also holds data.ahead, the weights Python printed for the grid
// points along the handle's path (pure/plane.ahead); a move onto one of them draws its weights at once, the very
// text Python sent for that point (the bars as long as the printed weights), never a number made here. Elsewhere
// the last answer's weights stay until the next answer. Each report carries a lead: the pointer's velocity (plane
// units a second, over the last VELOCITY_MS) times the drag's last answer round trip and LOOK_MS, at most the
// plane's reach; Python sends the points from the reported one on along the lead, where the pointer will be.
// Labels are placed by layoutLabels: each, by rank (the chosen query's first, then the keys' by weight), at the
// nearest free place by its handle, measured by the browser (getBBox); one with no free place is hidden.
const SVG = "http://www.w3.org/2000/svg";
const SIZE = 400; // the viewBox is SIZE x SIZE; the browser scales it to the element's width
const PAD = 36;
const C = SIZE / 2;
const IN_FLIGHT = 2; // reports of a drag unanswered at once
const STALLED_MS = 2000; // an answer this late is taken as lost: the waiting position is sent anyway
const VELOCITY_MS = 100; // the pointer's velocity is measured over its moves this recent
const LOOK_MS = 300; // a move is not reported while the weights in hand reach where the pointer will be this much later
const REST_MS = 120; // ... unless the pointer then rests this long: its point is reported (the heatmap follows)
const KEYS = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, 1], ArrowDown: [0, -1] };

// Set the attributes `attrs` of `node` that differ from what it has (an unchanged drawing is not laid out again).
function set(node, attrs) {
  for (const [k, v] of Object.entries(attrs)) if (node.getAttribute(k) !== String(v)) node.setAttribute(k, v);
}

// Set a node's text only when it differs.
function text(node, value) {
  if (node.textContent !== value) node.textContent = value;
}

function make(name, attrs, parent, ns = SVG) {
  const node = ns ? document.createElementNS(ns, name) : document.createElement(name);
  set(node, attrs);
  parent.appendChild(node);
  return node;
}

let gestures = 0;
function gestureId() {
  gestures += 1;
  return `${Date.now().toString(36)}-${gestures}`;
}

function build(parent) {
  const root = make("div", { class: "plane" }, parent, null);
  const svg = make("svg", { viewBox: `0 0 ${SIZE} ${SIZE}`, role: "group", "aria-label": "Vector plane" }, root);
  const axes = make("g", { class: "axes" }, svg);
  make("line", { x1: PAD, y1: C, x2: SIZE - PAD, y2: C }, axes);
  make("line", { x1: C, y1: PAD, x2: C, y2: SIZE - PAD }, axes);
  const xName = make("text", { x: SIZE - PAD, y: C - 8, "text-anchor": "end" }, axes);
  const yName = make("text", { x: C + 8, y: PAD + 4 }, axes);
  const reach = make("text", { class: "reach", x: SIZE - PAD, y: C + 22, "text-anchor": "end" }, axes);
  const arrows = make("g", {}, svg);
  // the chosen query's handle painted again over the keys' (its arrow is first in the drawing, so first in the Tab
  // order): the pointer that presses this copy drags the query, as if it were its own handle; not read, not focused
  const top = make("use", { class: "top", "aria-hidden": "true" }, svg);
  top.addEventListener("pointerdown", (e) => view.chosen && start(view, view.chosen, e));
  const bars = make("div", { class: "bars", role: "list", "aria-label": "Weights of the chosen query" }, root, null);
  // what a move did, said once its weights are in (a polite live region: read when the reader is idle)
  const said = make("div", { class: "said", role: "status", "aria-live": "polite" }, root, null);
  planes += 1;
  const view = { root, svg, xName, yName, reach, arrows, top, bars, said, handles: new Map(), rows: [], drag: null };
  Object.assign(view, { data: null, id: `plane${planes}`, chosen: null, moved: false });
  return view;
}
let planes = 0;

// One arrow: a line from the origin, its label, and (for a draggable vector) a focusable handle at its end.
function arrow(view, id) {
  let a = view.handles.get(id);
  if (a) return a;
  const g = make("g", { class: "arrow" }, view.arrows);
  const line = make("line", { x1: C, y1: C }, g);
  const handle = make("circle", { class: "handle", r: 7 }, g);
  const label = make("text", {}, g);
  const token = make("tspan", {}, label);
  const weight = make("tspan", { class: "weight", dx: 4 }, label);
  set(handle, { id: `${view.id}-${id.replace(":", "-")}` });
  a = { g, line, handle, label, token, weight, kind: id[0], row: Number(id.slice(2)), xy: [0, 0] };
  handle.addEventListener("pointerdown", (e) => start(view, a, e));
  handle.addEventListener("pointermove", (e) => move(view, a, e));
  handle.addEventListener("pointerup", (e) => end(view, a, e));
  handle.addEventListener("pointercancel", (e) => end(view, a, e));
  handle.addEventListener("keydown", (e) => key(view, a, e));
  view.handles.set(id, a);
  return a;
}

function px(view, [x, y]) {
  const s = (C - PAD) / view.data.reach;
  return [C + x * s, C - y * s];
}

function place(view, a, xy) {
  a.xy = xy;
  const [x, y] = px(view, xy);
  set(a.line, { x2: x, y2: y });
  set(a.handle, { cx: x, cy: y });
  a.hx = x; // the handle's centre, where layoutLabels puts the label beside
  a.hy = y;
}

const GAP = 3; // viewBox units kept clear between two labels, and between a label and a handle
const BESIDE = 10; // from a handle's centre to the near end of its label

function overlaps(p, q) {
  return p.x < q.x + q.width + GAP && q.x < p.x + p.width + GAP && p.y < q.y + q.height + GAP && q.y < p.y + p.height + GAP;
}

// A label's box by its handle: to its right ("start"), to its left ("end") or over it ("over": centred on it, moved
// sideways to stay inside the drawing, never on the handle's own line), `lines` lines down (negative: up) from its
// first place, which is above the handle on the upper half of the plane and below it on the lower.
function spot(a, size, side, lines) {
  const x = {
    start: a.hx + BESIDE,
    end: a.hx - BESIDE - size.width,
    over: Math.max(-PAD, Math.min(SIZE + PAD - size.width, a.hx - size.width / 2)),
  }[side];
  const y = (a.hy >= C ? a.hy + 16 : a.hy - 8) + size.baseline + lines * size.height;
  return { x, y, width: size.width, height: size.height };
}

// Inside the drawing: above and below the viewBox are the pickers and the bars (the label would cover them); to
// the sides the element keeps a margin wider than PAD (plane.css) where a label at the plane's edge is drawn whole.
function inside(b) {
  return b.y >= 0 && b.y + b.height <= SIZE && b.x >= -PAD && b.x + b.width <= SIZE + PAD;
}

// The places to try for a label, nearest first: on its own line, then a line further from the horizontal axis,
// a line nearer, two lines ...; on each, on the handle's own side (away from the vertical axis), the other, over it.
function* spots(a, size) {
  const own = a.hx >= C ? "start" : "end";
  const sides = [own, own === "start" ? "end" : "start"];
  const away = a.hy >= C ? 1 : -1;
  for (const side of sides) yield spot(a, size, side, 0);
  for (let n = 1; n * size.height <= SIZE; n++) {
    for (const lines of [n * away, -n * away]) {
      for (const side of [...sides, "over"]) yield spot(a, size, side, lines);
    }
  }
}

// Each label in turn (by rank: the chosen query's first, then the keys' by weight) takes the nearest free place
// by its handle (spots), clear of the labels placed before it, of every other handle and of the axis
// names, and inside the drawing; where none is free, it is not shown (the bars name every key and its weight).
// Sizes are the browser's (getBBox); a label the browser does not lay out (width 0: hidden) is left alone.
function layoutLabels(view) {
  const order = [...view.handles.values()].sort((a, b) => a.rank - b.rank);
  for (const a of order) set(a.label, { "text-anchor": "start", x: 0, y: 0 }); // every label measured where it
  // starts, all written before any is read: the browser lays the drawing out once for all the measures below
  const placed = [view.xName, view.yName, view.reach].map((t) => t.getBBox()).filter((b) => b.width);
  const boxes = new Map(order.map((a) => [a, a.label.textContent ? a.label.getBBox() : null]));
  const handles = order.map((a) => [a, a.handle.getBBox()]);
  for (const a of order) {
    const box = boxes.get(a);
    if (!box || !box.width) continue;
    const size = { width: box.width, height: box.height, baseline: box.y }; // baseline: the box's top from y = 0
    const clear = [...placed, ...handles.filter(([b]) => b !== a).map(([, h]) => h)];
    let best = null;
    for (const b of spots(a, size)) {
      if (inside(b) && !clear.some((c) => overlaps(c, b))) {
        best = b;
        break;
      }
    }
    a.label.classList.toggle("unplaced", !best);
    if (!best) continue;
    set(a.label, { x: best.x, y: best.y - size.baseline });
    placed.push(best);
  }
}

// Python's round(value / grid): the nearest whole number of grid steps, a tie to the even one.
function gridIndex(value, grid) {
  const v = value / grid;
  const f = Math.floor(v);
  const d = v - f;
  if (d !== 0.5) return d > 0.5 ? f + 1 : f;
  return f % 2 === 0 ? f : f + 1;
}

const pointsOf = new WeakMap(); // data.ahead -> Map "x,y" (grid indices) -> its index in data.ahead.text

// The weights `near` (data.ahead) holds for the dragged handle's grid point, with that point's name, or null when
// it holds none for it (another drag, another handle, or a point it does not cover).
function lookup(view, near, xy = view.drag && view.drag.a.xy) {
  const drag = view.drag;
  if (!drag || !near || near.id !== drag.id || near.kind !== drag.a.kind || near.row !== drag.a.row) return null;
  if (!pointsOf.has(near)) pointsOf.set(near, new Map(near.points.map(([x, y], k) => [`${x},${y}`, k])));
  const [x, y] = xy.map((v) => gridIndex(v, near.grid));
  const k = pointsOf.get(near).get(`${x},${y}`);
  if (k === undefined) return null;
  return { text: near.text[k], at: `${drag.id} ${drag.a.kind}:${drag.a.row} ${x},${y}` };
}

// `data` with the chosen query's weights `text` (printed by Python) in place of its own.
function withWeights(data, text) {
  return { ...data, weight_text: text, weights: text.map(Number) };
}

function report(view, a, done, id, seq = 0, lead = [0, 0]) {
  view.setState("drag", { kind: a.kind, row: a.row, x: a.xy[0], y: a.xy[1], id, done, seq, lead });
}

// How far the pointer will have moved LOOK_MS after a report sent now is answered: its velocity over the last
// VELOCITY_MS times the drag's last round trip and LOOK_MS, at most the plane's reach long ([0, 0] before the first
// answer).
function lead(view, drag, now) {
  if (!(drag.roundTrip > 0)) return [0, 0];
  const d = travel(drag, now, drag.roundTrip + LOOK_MS);
  const shorten = Math.min(1, view.data.reach / (Math.hypot(d[0], d[1]) || 1));
  return d.map((v) => v * shorten);
}

// How far the pointer moves in `ms` at its velocity over the last VELOCITY_MS ([0, 0] before it has one).
function travel(drag, now, ms) {
  const trail = drag.trail;
  while (trail.length > 2 && now - trail[1][0] > VELOCITY_MS) trail.shift();
  const [t0, x0, y0] = trail[0];
  const seconds = (now - t0) / 1000;
  if (trail.length < 2 || !(seconds > 0)) return [0, 0];
  const ahead = ms / 1000 / seconds;
  return [(drag.a.xy[0] - x0) * ahead, (drag.a.xy[1] - y0) * ahead];
}

// True when the answer in hand holds the weights for the pointer's point and for where it will be LOOK_MS later.
function covered(view, drag, now) {
  const near = view.data.ahead;
  const d = travel(drag, now, LOOK_MS);
  return Boolean(lookup(view, near) && lookup(view, near, [drag.a.xy[0] + d[0], drag.a.xy[1] + d[1]]));
}

// Send the dragged handle's position if it moved since the last report and an answer slot is free (or the
// answers stalled); else leave it waiting: answered() or the stall timer sends it.
function pump(view) {
  const drag = view.drag;
  if (!drag || !drag.waiting) return;
  const now = performance.now();
  if (drag.sent - drag.answered >= IN_FLIGHT && now - drag.sentAt < STALLED_MS) {
    drag.timer ||= setTimeout(() => {
      drag.timer = 0;
      pump(view);
    }, STALLED_MS);
    return;
  }
  drag.waiting = false;
  drag.sent += 1;
  drag.sentAt = now;
  drag.sentTimes.set(drag.sent, now);
  report(view, drag.a, false, drag.id, drag.sent, lead(view, drag, now));
}

// Python's answer to a report of the current drag: every report up to its seq is answered.
function answered(view, answer) {
  const drag = view.drag;
  if (!drag || !answer || answer.id !== drag.id) return;
  const sentAt = drag.sentTimes.get(answer.seq);
  if (sentAt !== undefined) drag.roundTrip = performance.now() - sentAt;
  for (const seq of drag.sentTimes.keys()) if (seq <= answer.seq) drag.sentTimes.delete(seq);
  drag.answered = Math.max(drag.answered, Math.min(answer.seq, drag.sent));
  next(view);
}

function clamp(view, v) {
  return Math.max(-view.data.reach, Math.min(view.data.reach, v));
}

function start(view, a, e) {
  if (!a.draggable) return;
  e.preventDefault();
  a.handle.setPointerCapture(e.pointerId);
  a.handle.focus();
  view.drag = { a, id: gestureId(), sent: 0, answered: 0, sentAt: 0, waiting: false, timer: 0, rest: 0 };
  Object.assign(view.drag, { sentTimes: new Map(), roundTrip: 0, trail: [[performance.now(), ...a.xy]] });
}

function move(view, a, e) {
  const drag = view.drag;
  if (!drag || drag.a !== a) return;
  const point = new DOMPoint(e.clientX, e.clientY).matrixTransform(view.svg.getScreenCTM().inverse());
  const s = (C - PAD) / view.data.reach;
  place(view, a, [clamp(view, (point.x - C) / s), clamp(view, (C - point.y) / s)]);
  drag.trail.push([performance.now(), ...a.xy]);
  const near = lookup(view, view.data.ahead);
  if (near) update(view, withWeights(view.data, near.text), near.at);
  else layoutLabels(view);
  drag.waiting = true;
  next(view);
}

// The dragged handle's new position is reported (pump) unless the answer in hand already covers the pointer's way
// (covered): then only once the pointer rests REST_MS, so that its point's answer (and the heatmap) follows.
function next(view) {
  const drag = view.drag;
  if (!drag) return;
  clearTimeout(drag.rest);
  if (drag.waiting && covered(view, drag, performance.now())) drag.rest = setTimeout(() => pump(view), REST_MS);
  else pump(view);
}

function end(view, a, e) {
  const drag = view.drag;
  if (!drag || drag.a !== a) return;
  clearTimeout(drag.timer);
  clearTimeout(drag.rest);
  view.drag = null; // nothing of this drag is sent after its end
  if (a.handle.hasPointerCapture(e.pointerId)) a.handle.releasePointerCapture(e.pointerId);
  view.moved = true;
  view.lastMoved = a;
  view.movedTo = [...a.xy];
  report(view, a, true, drag.id, drag.sent + 1);
}

function key(view, a, e) {
  const dir = KEYS[e.key];
  if (!dir || !a.draggable) return;
  e.preventDefault();
  const step = view.data.step;
  place(view, a, [clamp(view, a.xy[0] + dir[0] * step), clamp(view, a.xy[1] + dir[1] * step)]);
  layoutLabels(view);
  view.moved = true;
  view.lastMoved = a;
  view.movedTo = [...a.xy];
  report(view, a, true, gestureId());
}

const SLIDER = ["tabindex", "role", "aria-label", "aria-valuemin", "aria-valuemax", "aria-valuenow", "aria-valuetext"];

function draw(view, id, xy, { draggable, name, token, weight, cls, rank, says }) {
  const a = arrow(view, id);
  a.draggable = draggable;
  a.rank = rank;
  set(a.g, { class: `arrow ${cls}` });
  text(a.token, token);
  text(a.weight, weight);
  const dragging = view.drag && view.drag.a === a;
  if (!dragging) place(view, a, xy); // the handle under the pointer stays there
  if (draggable) {
    // a slider whose value is the handle's place across the plane (the arrow keys move it up and down too)
    const reach = view.data.reach;
    set(a.handle, { tabindex: "0", role: "slider", "aria-label": name, "aria-valuemin": -reach, "aria-valuemax": reach });
    set(a.handle, { "aria-valuenow": fixed(a.xy[0]), "aria-valuetext": `${name} at ${point(a.xy)}; ${says}` });
  } else {
    for (const k of SLIDER) a.handle.removeAttribute(k);
  }
  return id;
}

// A coordinate as the plane's value text writes it: two decimals, never "-0.00".
function fixed(v) {
  const r = Math.round(v * 100) / 100;
  return (r === 0 ? 0 : r).toFixed(2);
}

function point(xy) {
  return `(${fixed(xy[0])}, ${fixed(xy[1])})`;
}

// "strongest key Emma 0.58": the key the chosen query weighs most and its weight as Python printed it.
function strongest(data) {
  let best = -1;
  data.weights.forEach((w, j) => {
    if (!data.masked[j] && (best < 0 || w > data.weights[best])) best = j;
  });
  return best < 0 ? "every key masked" : `strongest key ${data.key_tokens[best]} ${data.weight_text[best]}`;
}

// True when `data` has the moved handle where it was let go (Python snaps it to the grid, a tenth of an arrow key's
// step): its weights are the move's.
function holdsMove(view, data) {
  const a = view.lastMoved;
  const pos = a && (a.kind === "Q" ? data.queries : data.keys)[a.row];
  return Boolean(pos) && Math.hypot(pos[0] - view.movedTo[0], pos[1] - view.movedTo[1]) < data.step / 10;
}

// What the live region says after a move: the moved query's place and its top weights (at most three).
function summary(data, a) {
  const order = data.key_tokens.map((_, j) => j).filter((j) => !data.masked[j]);
  order.sort((i, j) => data.weights[j] - data.weights[i]);
  const top = order.slice(0, 3).map((j) => `${data.key_tokens[j]} ${data.weight_text[j]}`);
  const query = `query ${data.query_tokens[data.query]}`;
  const moved = a && a.kind === "K" ? `key ${data.key_tokens[a.row]} at ${point(a.xy)}; ` : "";
  return `${moved}${query}${a && a.kind === "Q" ? ` at ${point(a.xy)}` : ""}: ${top.join(", ") || "every key masked"}`;
}

function drawBars(view, data) {
  const n = data.key_tokens.length;
  while (view.rows.length > n) view.rows.pop().row.remove();
  while (view.rows.length < n) {
    const row = make("div", { class: "bar", role: "listitem" }, view.bars, null);
    const token = make("span", { class: "token" }, row, null);
    const track = make("span", { class: "track" }, row, null);
    const fill = make("span", { class: "fill" }, track, null);
    const value = make("span", { class: "value" }, row, null);
    view.rows.push({ row, token, fill, value });
  }
  data.key_tokens.forEach((t, j) => {
    const r = view.rows[j];
    text(r.token, t);
    text(r.value, data.weight_text[j]);
    const width = `${Math.max(0, Math.min(1, data.weights[j])) * 100}%`;
    if (r.fill.style.width !== width) r.fill.style.width = width;
  });
}

// Draw `data`; `at` names the grid point of a drag whose weights it holds (null: not a drag's point). New weights
// are marked drawn unless they are the point's already drawn.
function update(view, data, at = null) {
  view.data = data;
  view.root.classList.toggle("big", Boolean(data.big));
  text(view.xName, data.dims[0]);
  text(view.yName, data.dims[1]);
  text(view.reach, `±${data.reach}`);
  const seen = new Set();
  const query = `query ${data.query_tokens[data.query]}`;
  data.keys.forEach((xy, j) => {
    const masked = data.masked[j];
    seen.add(
      draw(view, `K:${j}`, xy, {
        draggable: data.keys_move,
        name: `key ${data.key_tokens[j]}`,
        token: data.key_tokens[j],
        weight: masked ? "masked" : data.weight_text[j],
        cls: "key",
        rank: -data.weights[j],
        says: masked ? `masked for ${query}` : `weight for ${query} ${data.weight_text[j]}`,
      }),
    );
  });
  data.queries.forEach((xy, i) => {
    const chosen = i === data.query;
    if (!chosen && !data.other_queries) return; // on a plane of two keys only the chosen query is drawn
    seen.add(
      draw(view, `Q:${i}`, xy, {
        draggable: chosen,
        name: `query ${data.query_tokens[i]}`,
        token: data.query_tokens[i],
        weight: "",
        cls: chosen ? "query chosen" : "query other",
        rank: chosen ? -2 : 1,
        says: strongest(data),
      }),
    );
  });
  for (const [id, a] of view.handles) {
    if (!seen.has(id)) {
      a.g.remove();
      view.handles.delete(id);
    }
  }
  const chosen = view.handles.get(`Q:${data.query}`);
  // first in the drawing, so first in the Tab order (its handle is painted again on top: view.top); moved only
  // when it is not first already (a moved element loses the focus)
  if (chosen && view.arrows.firstChild !== chosen.g) view.arrows.insertBefore(chosen.g, view.arrows.firstChild);
  view.chosen = chosen || null;
  set(view.top, { href: chosen ? `#${chosen.handle.id}` : "" });
  drawBars(view, data);
  layoutLabels(view);
  if (view.moved && !view.drag && holdsMove(view, data)) {
    view.moved = false; // said once, with the first weights computed where the handle was let go
    text(view.said, summary(data, view.lastMoved));
  }
  if (at === null || at !== view.drawnAt) performance.mark("attention-lab:plane-drawn"); // bench_browser.py times it
  view.drawnAt = at;
}

// The grid point whose weights an answer holds (its data.ahead's), or null.
function answeredAt(data) {
  const near = data.ahead;
  return near ? `${near.id} ${near.kind}:${near.row} ${near.at[0]},${near.at[1]}` : null;
}

export default function (component) {
  const { data, parentElement, setStateValue } = component;
  parentElement.__plane ??= build(parentElement);
  const view = parentElement.__plane;
  view.setState = setStateValue;
  if (data) {
    const near = lookup(view, data.ahead); // the pointer's point, when this answer's weights ahead reach it
    if (near) update(view, withWeights(data, near.text), near.at);
    else update(view, data, answeredAt(data));
  }
  if (data) answered(view, data.answered);
  // a figure drawn in place that follows the drag (ui/components/figure.js)
  if (data && data.follow) document.dispatchEvent(new CustomEvent("attention-lab:figure", { detail: data.follow }));
}

// A plotly figure drawn in place (st.components.v2). Streamlit calls this again with each run's `data` and the
// same parentElement: the plot's div is made once and kept on that element; each call hands the new figure to
// Plotly.react, which updates the drawing (hover, zoom and the toolbar stay; layout.uirevision keeps the zoom).
// data: {spec: plotly's JSON of the figure, config, plotly: the URL of plotly.js (served by the app), key,
// stretch: as tall as the element (else the figure's height), alt: its accessible name (a figure of that name)}.
// Another component may send a figure for this key between two runs, as a document event "attention-lab:figure"
// with detail {key, spec (JSON text or the figure), view}; it is drawn the same way until the next run's data.
// `view` (a class's view version, in an event and in a following page's data): a figure of an older view than the
// one drawn is not drawn (a run that started before the class's signal drew the newer view ahead), nor the same
// figure of the view drawn ahead again; none: drawn. A figure drawn ahead is marked `data-ahead` until the page's run
// reaches it: it is not faded with the rest of the page while that run is under way (frame.py's CSS).
const loading = new Map();

function plotlyJs(url) {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!loading.has(url)) {
    loading.set(
      url,
      new Promise((resolve, reject) => {
        const script = document.createElement("script");
        script.src = url;
        script.onload = () => resolve(window.Plotly);
        script.onerror = () => reject(new Error(`plotly.js did not load from ${url}`));
        document.head.appendChild(script);
      }),
    );
  }
  return loading.get(url);
}

const figures = new Map(); // key -> the view drawing it
document.addEventListener("attention-lab:figure", (e) => {
  const view = figures.get(e.detail.key);
  if (!view || !view.plot.isConnected || older(view, e.detail.view, true)) return;
  const fig = typeof e.detail.spec === "string" ? JSON.parse(e.detail.spec) : e.detail.spec;
  view.shown = e.detail.view ?? null;
  view.ahead = view.shown === null ? null : JSON.stringify(fig);
  if (view.ahead !== null) view.plot.dataset.ahead = String(view.shown); // fresher than the page around it
  draw(view, fig);
});

// a figure of class view `at` is older than the one drawn (`same`: or the same view drawn already)
function older(view, at, same) {
  if (at === undefined || at === null || view.shown === undefined || view.shown === null) return false;
  return same ? at <= view.shown : at < view.shown;
}

function build(parent) {
  const plot = document.createElement("div");
  plot.className = "figure-in-place";
  parent.appendChild(plot);
  const view = { plot, data: null, drawing: Promise.resolve() };
  // the figure follows its element's width (plotly's `responsive` follows the window's only): a column beside it
  // that grows or shrinks (another table's tab opened) resizes it, after any drawing under way; a plot not displayed
  // (width 0) waits, as plotly asks, until it is shown again, which is another resize
  new ResizeObserver(() => {
    view.drawing = view.drawing
      .catch(() => undefined)
      .then(() => plot.data && plot.offsetWidth && window.Plotly.Plots.resize(plot))
      .catch(() => undefined); // a plot taken off the page meanwhile: nothing to resize
  }).observe(plot);
  return view;
}

function draw(view, spec) {
  const { config, plotly, key, stretch } = view.data;
  const fig = typeof spec === "string" ? JSON.parse(spec) : spec;
  const layout = { ...fig.layout, uirevision: key };
  if (stretch) {
    delete layout.height;
    layout.autosize = true;
    view.plot.style.height = "100%";
  } else {
    view.plot.style.height = `${layout.height}px`;
  }
  const options = { responsive: true, modeBarButtonsToRemove: ["lasso2d", "select2d"], ...config };
  // one drawing at a time, in the order asked: a later figure is never overwritten by an earlier one
  view.drawing = view.drawing
    .catch(() => undefined)
    .then(() => plotlyJs(plotly))
    .then((Plotly) => Plotly.react(view.plot, fig.data, layout, options))
    .then(() => {
      listen(view);
      view.plot.dataset.drawn = String(Number(view.plot.dataset.drawn || 0) + 1);
      performance.mark("attention-lab:figure-drawn"); // benchmarks/bench_browser.py times it
    })
    .catch((err) => {
      view.plot.textContent = `The chart could not be drawn: ${err.message}`;
      throw err;
    });
  return view.drawing;
}

// A tap (or click) on a cell of a figure whose data says `tappable` reports the cell to the app as the trigger
// "tapped": {row, col, n} (n counts the taps, so the same cell tapped twice is two reports).
function listen(view) {
  if (view.listening || !view.plot.on) return;
  view.listening = true;
  view.plot.on("plotly_click", (event) => {
    if (!view.data.tappable || !view.report) return;
    const point = (event.points || []).find((p) => p.data.type === "heatmap");
    if (!point) return;
    view.taps = (view.taps || 0) + 1;
    view.report("tapped", { row: Math.round(point.y), col: Math.round(point.x), n: view.taps });
  });
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  parentElement.__figure ??= build(parentElement);
  const view = parentElement.__figure;
  if (!data) return;
  view.data = data;
  view.report = setTriggerValue;
  figures.set(data.key, view);
  if (data.alt) {
    view.plot.setAttribute("role", "figure");
    if (view.plot.getAttribute("aria-label") !== data.alt) view.plot.setAttribute("aria-label", data.alt);
  }
  if (older(view, data.view, false)) return;
  const fig = JSON.parse(data.spec);
  const drawnAhead = data.view !== null && data.view === view.shown && view.ahead === JSON.stringify(fig);
  view.shown = data.view ?? null;
  view.ahead = null;
  delete view.plot.dataset.ahead;
  if (!drawnAhead) draw(view, fig); // the run of the view drawn ahead, the same figure: drawn already
}

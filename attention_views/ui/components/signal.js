// The lecturer's view's main chart (classroom.Watcher.draw): handed to the figure of its key (figure.js), which
// draws it unless it shows that view or a newer one already; resolved once plotly.js has it, or when the file cannot
// be read within AHEAD_MS (the page's rerun draws the view then).
const AHEAD_MS = 1000;
async function drawAhead(url) {
  try {
    const reply = await fetch(url, { cache: "no-store", signal: AbortSignal.timeout(AHEAD_MS) });
    if (!reply.ok) return;
    const made = await reply.json();
    const detail = { key: made.key, spec: made.figure, view: made.view };
    document.dispatchEvent(new CustomEvent("attention-lab:figure", { detail }));
    await new Promise((drawn) => setTimeout(drawn));  // after plotly.js took the figure (its promise chain)
  } catch (e) {
    // a half-open connection, or a file being replaced: the rerun the move asks for draws the view
  }
}

const KEPT = "attention-lab-lecturer";  // this tab's class and lecturer key: sessionStorage, one tab, kept on reload
export default function ({ parentElement, data, setTriggerValue }) {
  // Called again on the same element when a run draws it: the state lives on the element. A rerun of the page's
  // fragment alone draws it as the last whole run did (classroom.class_signal): data.version may be older than
  // the page, and state.asked keeps a version from being asked for twice.
  const host = parentElement.host || parentElement;
  const state = host.labClass || (host.labClass = { asked: null, timer: null, reclaimed: false });
  state.data = data;
  try {
    if (data.seat) {  // this browser's seat, for the next page load (st.context.cookies): a reload keeps it
      const { name, token, max_age } = data.seat;
      document.cookie = `${name}=${token}; path=/; max-age=${max_age}; SameSite=Lax`;
    }
    if (data.remember) sessionStorage.setItem(KEPT, JSON.stringify(data.remember));
    if (data.reclaim && !state.reclaimed) {  // a student's seat: did this tab lead the class before a reload?
      state.reclaimed = true;
      const kept = JSON.parse(sessionStorage.getItem(KEPT) || "null");
      if (kept && kept.code === data.reclaim && kept.key) setTriggerValue("reclaim", kept.key);
    }
  } catch (e) {
    // storage refused (a browser's privacy setting): the lecturer takes the class back by hand
  }
  if (state.version !== data.version) { state.version = data.version; state.movedAt = Date.now(); }
  // a class action (a join from the sidebar, Break away, Rejoin) closes the sidebar on a phone: it covers the page
  if (data.actions !== undefined && data.actions !== state.actions) {
    const before = state.actions;
    state.actions = data.actions;
    if ((before !== undefined || data.actions > 0) && innerWidth < data.sidebar.phone_px) {
      const bar = document.querySelector(data.sidebar.open);
      if (bar) bar.querySelector(data.sidebar.close)?.click();
    }
  }
  if (!data.every_ms || state.timer !== null) return;
  state.fresh = Date.now();  // when the room's file last beat (a new "beat"), or the polling started
  const poll = async () => {
    if (!host.isConnected) { clearTimeout(state.timer); state.timer = null; return; }
    const now = Date.now();
    try {
      const reply = state.data.url ? await fetch(state.data.url, { cache: "no-store" }) : null;
      if (reply && reply.ok) {
        const seen = await reply.json();
        if (seen.beat !== state.beat) { state.beat = seen.beat; state.fresh = now; }
        // moved: the room ended, or a version newer than the page's and than any asked for (a file another
        // process wrote a moment late may hold an older one)
        const newest = Math.max(state.data.version, state.asked ?? -1);
        const moved = seen.version === -1 ? state.asked !== -1 : seen.version > newest;
        // the lecturer's new view: its main chart drawn first from its file, then the page's rerun asked for (on a
        // phone the rerun's drawing of the whole page would hold the chart back)
        if (state.data.in_place && seen.view > Math.max(state.data.view, state.figured ?? -1)) {
          state.figured = seen.view;
          await drawAhead(state.data.figure);
        }
        if (moved) {
          state.asked = seen.version;
          state.movedAt = now;  // the rerun it asks for may leave this element's data as it is (a fragment's)
          setTriggerValue("moved", seen.version);
          return;
        }
      }
    } catch (e) {
      // no file yet, or a half-open connection: the next poll tries again
    }
    // the file stopped beating (the server cannot write it, or cannot read the store): the page asks the app
    // itself every fallback_ms, a rerun that reads the room, until the file beats again
    const stale = state.data.fallback || now - state.fresh > state.data.stale_ms;
    if (stale && now - (state.nudged ?? 0) >= state.data.fallback_ms) {
      state.nudged = now;
      setTriggerValue("stale", now);
    }
  };
  // every_ms while the class moves; idle_ms once nothing moved for idle_after_ms (a hall's Wi-Fi carries fewer polls)
  const tick = async () => {
    await poll();
    if (state.timer === null) return;
    const quiet = Date.now() - state.movedAt > state.data.idle_after_ms;
    state.timer = setTimeout(tick, quiet ? state.data.idle_ms : state.data.every_ms);
  };
  state.timer = setTimeout(tick, state.data.every_ms);
}

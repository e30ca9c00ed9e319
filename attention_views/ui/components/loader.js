// components/served.py: imports the component's module once a page
const MODULE = new URL("__MODULE__", document.baseURI).href;
const modules = (window.__labModules ??= new Map());
export default function (component) {
  let entry = modules.get(MODULE);
  if (entry && entry.module) return entry.module.default(component);
  if (!entry) {
    entry = { module: null, waiting: new Map() };
    modules.set(MODULE, entry);
    import(MODULE)
      .then((module) => {
        entry.module = module;
        for (const call of entry.waiting.values()) module.default(call);
      })
      .catch((err) => {
        modules.delete(MODULE); // the next run's call tries again
        for (const call of entry.waiting.values()) call.parentElement.textContent = `Not loaded: ${err.message}`;
      })
      .finally(() => entry.waiting.clear());
  }
  entry.waiting.set(component.parentElement, component); // each element's latest call
}

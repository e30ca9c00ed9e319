// components/served.py: the component's module, imported once a page; calls before it arrives replayed then
const MODULE = new URL("__MODULE__", document.baseURI).href;
const modules = (window.__labModules ??= new Map());
export default function (component) {
  let entry = modules.get(MODULE);
  if (entry && entry.module) return entry.module.default(component);
  if (!entry) {
    entry = { module: null, waiting: new Map() };
    modules.set(MODULE, entry);
    import(MODULE).then((module) => {
      entry.module = module;
      for (const call of entry.waiting.values()) module.default(call);
      entry.waiting.clear();
    });
  }
  entry.waiting.set(component.parentElement, component); // the latest call of each element
}

// Browser stand-in for `node:events`, used only by the portable test's import map while the
// core still imports `setMaxListeners` from it (a no-op: browsers have no listener limit).
export function setMaxListeners() {}

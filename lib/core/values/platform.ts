/**
 * The two things the core asks of its host beyond the language: reporting a warning, and
 * lifting Node's listener limit on one `AbortSignal`. Both go through `globalThis.process`
 * when it exists, so `import 'toolrun'` has no static `node:` import and runs in browsers,
 * Deno, Bun and workers too (see docs/adr/0027-package.md).
 *
 * @module
 */

/** The part of Node's `process` used here; every member may be missing outside Node. */
interface HostProcess {
  emitWarning?: (message: string, type: string) => void;
  /** Node >= 20.16: loads a built-in module synchronously without an `import` statement. */
  getBuiltinModule?: (id: string) => unknown;
}

/** The part of `node:events` used here. */
interface HostEvents {
  setMaxListeners?: (n: number, ...targets: EventTarget[]) => void;
}

function hostProcess(): HostProcess | undefined {
  const candidate = (globalThis as { process?: unknown }).process;
  return typeof candidate === 'object' && candidate !== null ? (candidate as HostProcess) : undefined;
}

/**
 * Reports a warning that must not interrupt the run: `process.emitWarning(message,
 * 'ToolrunWarning')` under Node (and hosts that copy it), `console.warn` elsewhere.
 */
export function emitWarning(message: string): void {
  const host = hostProcess();
  if (typeof host?.emitWarning === 'function') host.emitWarning(message, 'ToolrunWarning');
  else console.warn(`ToolrunWarning: ${message}`);
}

/**
 * Lets any number of listeners wait on `signal` without Node's
 * `MaxListenersExceededWarning` (raised past 10). Does nothing where Node's `events` module
 * cannot be reached synchronously: no other host has that warning.
 */
export function allowManyListeners(signal: AbortSignal): void {
  const host = hostProcess();
  if (typeof host?.getBuiltinModule !== 'function') return;
  const events = host.getBuiltinModule('node:events') as HostEvents | undefined;
  events?.setMaxListeners?.(0, signal);
}

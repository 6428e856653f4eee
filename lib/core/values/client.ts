/**
 * The client values a call starts from: {@link NO_CLIENT} (a run without a client) and the
 * per-call view of a client that lends `sample` and `elicit` the call's signal.
 *
 * @module
 */
import type { ToolClient } from '../tool/client.ts';

/**
 * The client of a call that runs without one (in process, no `RunToolsOptions.client`): log
 * lines are dropped; `canSample` and `canElicit` are false; `sample` and `elicit` reject
 * with an `Error` saying there is no client to ask. Frozen.
 *
 * @example
 * ```ts
 * // A client of your own that keeps NO_CLIENT's sampling and elicitation but prints log lines:
 * const client: ToolClient = { ...NO_CLIENT, log: (level, data) => console.error(level, data) };
 * ```
 */
export const NO_CLIENT: ToolClient = Object.freeze({
  canSample: false,
  canElicit: false,
  log: () => {},
  sample: () => Promise.reject(new Error('this call has no client whose model could be asked (sampling needs an MCP client that supports it, or RunToolsOptions.client)')),
  elicit: () => Promise.reject(new Error('this call has no client whose user could be asked (elicitation needs an MCP client that supports it, or RunToolsOptions.client)')),
});

/**
 * @internal The client as one call sees it: `sample` and `elicit` without a signal of their
 * own take the call's (read when they are called, so an unread signal is never made).
 */
export function callClient(client: ToolClient, signal: () => AbortSignal): ToolClient {
  return {
    auth: client.auth,
    canSample: client.canSample,
    canElicit: client.canElicit,
    log: (level, data, logger) => client.log(level, data, logger),
    sample: (request, options) => client.sample(request, { signal: options?.signal ?? signal() }),
    elicit: (request, options) => client.elicit(request, { signal: options?.signal ?? signal() }),
  };
}

/**
 * Runs before each file of the fast project (`vitest.config.ts`, `setupFiles`).
 *
 * Importing `@openai/agents` starts its default trace processor, whose export loop re-arms a
 * 5 s `setTimeout` forever. The fast project shares one module graph per worker
 * (`isolate: false`), so once any file has imported the SDK, that loop keeps running through
 * the later files of the worker; when it re-arms while a file has `vi.useFakeTimers()` on,
 * its timer is a fake one that never fires, and the cases' "no timer left behind" check
 * (spec/cases/harness.ts) fails — only when the machine's load lines the two up. Replacing
 * the processors with none shuts the default one down and clears its timer; no spec uses
 * the SDK's own tracing (it would export to OpenAI's servers). The fast specs now import the
 * SDK's `@openai/agents-core`, which sets no default exporter (only `@openai/agents` does, at
 * import), so no fast spec starts that loop today; this stays as the guard for one that does.
 *
 * The SDK is not imported here: that alone costs about 1 s of CPU in every worker, most of
 * which never run a file that needs it. Its trace provider lives on `globalThis` under
 * `Symbol.for('openai.agents.core.traceProvider')` once the SDK is loaded, so the processors
 * are replaced only when a file has loaded it: after the file's imports (`beforeAll`, before
 * its tests) and after its last hook (`afterAll`, before the next file). If the SDK moves its
 * provider, `spec/adapters/openai-agents.spec.ts` ("… keeps its trace provider … under the
 * key the setup reads") fails.
 */
import { afterAll, beforeAll } from 'vitest';

/** Where `@openai/agents-core` keeps its process-wide trace provider. */
const traceProviderKey = Symbol.for('openai.agents.core.traceProvider');

function quietAgentsTracing(): void {
  const provider = (globalThis as Record<symbol, { setProcessors?: (processors: never[]) => void } | undefined>)[traceProviderKey];
  provider?.setProcessors?.([]);
}

quietAgentsTracing();
beforeAll(quietAgentsTracing);
afterAll(quietAgentsTracing);

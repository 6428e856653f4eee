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
 * the SDK's own tracing (it would export to OpenAI's servers).
 */
import { setTraceProcessors } from '@openai/agents';

setTraceProcessors([]);

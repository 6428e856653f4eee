/**
 * The fast adapter specs (`openai-agents`, `approval`, `approval-pending`, `abort` in
 * spec/adapters/) import the OpenAI Agents SDK's `tool()`, `RunContext`, `Agent` and
 * `RunToolApprovalItem` from `@openai/agents-core`, which loads in half the CPU of
 * `@openai/agents`. That tests what a user gets from `@openai/agents` only while the package
 * re-exports the core's own values; this spec fails the day it wraps or replaces one of them
 * (then the fast specs must import `@openai/agents` again). In `npm run test:slow`: loading
 * the whole SDK costs about 1 s of CPU.
 */
import * as agents from '@openai/agents';
import * as core from '@openai/agents-core';
import { describe, expect, it } from 'vitest';

describe('@openai/agents gives the values of @openai/agents-core that the fast adapter specs use', () => {
  it('tool, RunContext, Agent, RunToolApprovalItem and hostedMcpTool are the same functions', () => {
    for (const name of ['tool', 'RunContext', 'Agent', 'RunToolApprovalItem', 'hostedMcpTool'] as const) {
      expect(agents[name], name).toBe(core[name]);
    }
  });
});

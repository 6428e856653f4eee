/**
 * H7 at scale: the in-process memory of consumed state ids holds past 10,000 other resumes
 * (10,000 runs, about 1 s of CPU, so in `npm run test:slow`: vitest.config.ts,
 * `*.slow.spec.ts`). The other H7 cases are spec/core/approval.spec.ts.
 */
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { defineTool, runTools, type ToolCall } from '../../lib/index.ts';
import { rejection, withBody } from '../fixtures/approval/state.ts';
import { collect } from '../helpers.ts';

const call = (id: string, name: string, args: unknown = {}): ToolCall => ({ id, name, arguments: args });

describe('H7 a state resumes once', () => {
  // Fails with a memory of the last 10,000 ids (the oldest id forgotten first): the
  // replay after 10,000 other resumes ran the call a second time. Ids are now kept until
  // their state expires.
  it('H7: a state resumed after 10,000 other resumes is still refused', { timeout: 300_000 }, async () => {
    const executed: string[] = [];
    const removeOnly = [
      defineTool({
        name: 'remove',
        input: v.object({ path: v.string() }),
        needsApproval: true,
        execute: ({ path }, { toolCallId }) => {
          executed.push(toolCallId);
          return `removed ${path}`;
        },
      }),
    ];
    const calls = [call('a', 'remove', { path: '1' })];
    const first = await collect(runTools(calls, { tools: removeOnly }));
    const state = first.batch.paused!.state;
    const approvalId = first.batch.paused!.requests[0]!.approvalId;
    await collect(runTools(calls, { tools: removeOnly, resume: { state, approvals: [{ approvalId, approved: true }] } }));
    expect(executed).toEqual(['a']);
    // 10,000 other states (the same batch under new ids: an unsigned state is the application's
    // to keep), each resumed once with a denial, so nothing runs and nothing pauses again.
    for (let i = 0; i < 10_000; i++) {
      const other = withBody(state, (body) => ({ ...body, id: crypto.randomUUID() }));
      const run = await collect(runTools(calls, { tools: removeOnly, resume: { state: other, approvals: [{ approvalId, approved: false }] } }));
      if (run.batch.paused !== undefined || !run.batch.messages[0]!.isError) throw new Error(`resume ${i} did not complete with a denial`);
    }
    expect((await rejection(runTools(calls, { tools: removeOnly, resume: { state, approvals: [{ approvalId, approved: true }] } }))).code).toBe('already_resumed');
    expect(executed).toEqual(['a']);
  });
});

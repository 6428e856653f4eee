/**
 * Type tests (contract H10, H11) against the real `ai` 7 types: the approval
 * parts toolrun writes are ai 7's `ToolApprovalRequest` parts and UI message stream chunks,
 * `fromAISDKApprovalResponses` takes ai 7's `ModelMessage[]` and gives what `resume.approvals`
 * takes, and `always` is a boolean. Each `@ts-expect-error` is a mistake that must stay an
 * error (the checker fails when it compiles).
 */
import type * as ai from 'ai';
import { describe, expectTypeOf, test } from 'vitest';
import {
  fromAISDKApprovalResponses,
  toAISDKApprovalRequests,
  type AISDKToolApprovalRequestPart,
  type AISDKToolApprovalResponsePart,
  type AgentResult,
  type PausedBatch,
  type ResumeOptions,
  type ToolApprovalHandler,
  type ToolApprovalResponse,
} from '../../lib/index.ts';

declare const paused: PausedBatch;
declare const agent: AgentResult;
declare const history: ai.ModelMessage[];

describe('AI SDK approval parts (H10)', () => {
  test("the request parts are ai 7's assistant content parts and UI stream chunks", () => {
    expectTypeOf(toAISDKApprovalRequests(paused)).toEqualTypeOf<AISDKToolApprovalRequestPart[]>();
    expectTypeOf<AISDKToolApprovalRequestPart>().toExtend<ai.ToolApprovalRequest>();
    expectTypeOf<AISDKToolApprovalRequestPart>().toExtend<ai.UIMessageChunk>();
    expectTypeOf<AISDKToolApprovalRequestPart>().toExtend<Exclude<ai.AssistantContent, string>[number]>();
    expectTypeOf<AISDKToolApprovalResponsePart>().toExtend<ai.ToolApprovalResponse>();
    expectTypeOf<AISDKToolApprovalResponsePart>().toExtend<ai.ToolContent[number]>();
    // A paused runAgent converts the same way.
    if (agent.paused) expectTypeOf(toAISDKApprovalRequests(agent.paused)).toEqualTypeOf<AISDKToolApprovalRequestPart[]>();
    // @ts-expect-error the state alone holds no requests: pass the paused batch
    toAISDKApprovalRequests(paused.state);
  });

  test("the responses read from ai 7's ModelMessages are resume.approvals", () => {
    const approvals = fromAISDKApprovalResponses(history, paused);
    expectTypeOf(approvals).toEqualTypeOf<ToolApprovalResponse[]>();
    expectTypeOf(approvals).toExtend<NonNullable<ResumeOptions['approvals']>>();
    fromAISDKApprovalResponses(history, paused.requests);
    // @ts-expect-error the messages are an array, not one message
    fromAISDKApprovalResponses(history[0]!, paused);
  });
});

describe('standing decisions (H11)', () => {
  test('always is an optional boolean on a decision, from approve and in a resume', () => {
    expectTypeOf<ToolApprovalResponse['always']>().toEqualTypeOf<boolean | undefined>();
    const approve: ToolApprovalHandler = (request) => ({ approvalId: request.approvalId, approved: true, always: true });
    expectTypeOf(approve).toBeFunction();
    // @ts-expect-error always is a boolean
    const wrong: ToolApprovalResponse = { approvalId: 'a', approved: true, always: 'yes' };
    expectTypeOf(wrong).toEqualTypeOf<ToolApprovalResponse>();
  });
});

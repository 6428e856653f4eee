/**
 * The state of an agent run that paused for a person's approval: built when a turn's batch
 * pauses, read back (structure, version, signature) when a run resumes from it. The batch's
 * own state is inside it untouched; `runTools` checks that one when the batch resumes.
 *
 * Portable: no `node:` import; signing is the core's (Web Crypto HMAC-SHA256).
 *
 * @module
 */
import * as v from 'valibot';
import type { PausedBatchState } from '../../core/approval/approval.ts';
import { ResumeError } from '../../core/approval/resume-error.ts';
import { openStateBody, sealState } from '../../core/approval/state-envelope.ts';
import type { ToolResultMessage } from '../../core/tool/tool.ts';
import type { AgentMessage, AssistantMessage, PausedAgentBody, PausedAgentState } from './messages.ts';

/** What a run hands over when its turn's batch pauses. */
export interface AgentPauseParts {
  turn: number;
  /** The history before the paused turn. */
  messages: readonly AgentMessage[];
  message: AssistantMessage;
  batch: PausedBatchState;
  signingSecret: string | Uint8Array | undefined;
}

/** Builds (and, with a secret, signs) the state of a paused run: plain JSON, whatever the messages held. */
export async function pausedAgentState(parts: AgentPauseParts): Promise<PausedAgentState> {
  const body: PausedAgentBody = {
    turn: parts.turn,
    messages: parts.messages.map(jsonMessage),
    message: jsonMessage(parts.message),
    batch: parts.batch,
  };
  return sealState('toolrun/paused-agent', body, parts.signingSecret);
}

/**
 * A message as JSON. Why tool results get a fallback: their `details` and `meta` come from
 * tools and hooks and may hold what JSON cannot (a cycle, a BigInt); they are dropped then,
 * as the batch state does, and the message itself — what the model reads — is kept.
 */
function jsonMessage<M extends AgentMessage>(message: M): M {
  try {
    return JSON.parse(JSON.stringify(message)) as M;
  } catch (error) {
    if (message.role !== 'tool') throw error;
    const { toolCallId, toolName, content, isError } = message as ToolResultMessage;
    return JSON.parse(JSON.stringify({ role: 'tool', toolCallId, toolName, content, isError })) as M;
  }
}

// --- reading a state back

const Content = v.array(v.looseObject({ type: v.string() }));
const UserMessage = v.looseObject({ role: v.literal('user'), content: v.union([v.string(), Content]) });
const AssistantMessageSchema = v.looseObject({
  role: v.literal('assistant'),
  content: v.array(
    v.variant('type', [
      v.looseObject({ type: v.literal('text'), text: v.string() }),
      v.looseObject({ type: v.literal('thinking'), thinking: v.string() }),
      v.looseObject({ type: v.literal('toolCall'), id: v.string(), name: v.string() }),
    ]),
  ),
});
const ToolMessage = v.looseObject({ role: v.literal('tool'), toolCallId: v.string(), toolName: v.string(), content: Content, isError: v.boolean() });
const Body = v.strictObject({
  turn: v.pipe(v.number(), v.integer(), v.minValue(1)),
  messages: v.array(v.variant('role', [UserMessage, AssistantMessageSchema, ToolMessage])),
  message: AssistantMessageSchema,
  // Read by runTools when the batch resumes (bounds, signature, body); only its envelope here.
  batch: v.strictObject({
    version: v.literal(2),
    kind: v.literal('toolrun/paused-batch'),
    payload: v.string(),
    signature: v.optional(v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/))),
  }),
});

/** What a resumed run starts from. */
export interface RestoredAgent {
  turn: number;
  messages: AgentMessage[];
  message: AssistantMessage;
  batch: PausedBatchState;
}

/**
 * Bounds, verifies (with a secret), parses and validates the state given to `runAgent`'s
 * `resume`; every failure is a {@link ResumeError} (`malformed`, `version`, `signature`), a
 * throw of any other kind included (wrapped as `malformed`). The batch inside is checked by
 * `runTools` when it resumes (its body, expiry, tools, calls, single use).
 */
export async function readPausedAgentState(given: unknown, secret: string | Uint8Array | undefined, maxChars: number): Promise<RestoredAgent> {
  try {
    return await readBody(given, secret, maxChars);
  } catch (error) {
    if (error instanceof ResumeError) throw error;
    throw new ResumeError('malformed', `resume could not be read: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

async function readBody(given: unknown, secret: string | Uint8Array | undefined, maxChars: number): Promise<RestoredAgent> {
  const hint = ' (it is a paused batch: resume it with runTools, not runAgent)';
  const state = await openStateBody(given, Body, { kind: 'toolrun/paused-agent', maxChars, secret, otherKindHint: hint });
  if (!state.message.content.some((block) => block.type === 'toolCall')) throw new ResumeError('malformed', 'resume.state is inconsistent: the paused message has no tool call');
  return {
    turn: state.turn,
    messages: state.messages as AgentMessage[],
    message: state.message as AssistantMessage,
    batch: state.batch as PausedBatchState,
  };
}

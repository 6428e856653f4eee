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
import { readStateJson, ResumeError, signStateText, verifyStateText, type PausedBatchState } from '../../core/approval.ts';
import { describeValue, type ToolResultMessage } from '../../core/tool.ts';
import type { AgentMessage, AssistantMessage, PausedAgentState } from './messages.ts';

/** Characters of a state's JSON text read at most (the batch state's own bound). */
const MAX_STATE_CHARS = 128 * 1024 * 1024;

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
  const state: Record<string, unknown> = {
    version: 1,
    kind: 'toolrun/paused-agent',
    turn: parts.turn,
    messages: parts.messages.map(jsonMessage),
    message: jsonMessage(parts.message),
    batch: parts.batch,
  };
  if (parts.signingSecret !== undefined) state.signature = await signStateText(state, parts.signingSecret);
  return state as unknown as PausedAgentState;
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
const State = v.strictObject({
  version: v.literal(1),
  kind: v.literal('toolrun/paused-agent'),
  turn: v.pipe(v.number(), v.integer(), v.minValue(1)),
  messages: v.array(v.variant('role', [UserMessage, AssistantMessageSchema, ToolMessage])),
  message: AssistantMessageSchema,
  // Checked by runTools when the batch resumes.
  batch: v.looseObject({ kind: v.literal('toolrun/paused-batch') }),
  signature: v.optional(v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/))),
});

/** What a resumed run starts from. */
export interface RestoredAgent {
  turn: number;
  messages: AgentMessage[];
  message: AssistantMessage;
  batch: PausedBatchState;
}

/**
 * Parses, bounds, validates and (with a secret) verifies the state given to `runAgent`'s
 * `resume`; every failure is a {@link ResumeError} (`malformed`, `version`, `signature`).
 * The batch inside is checked by `runTools` when it resumes (tools, calls, single use).
 */
export async function readPausedAgentState(given: unknown, secret: string | Uint8Array | undefined): Promise<RestoredAgent> {
  const { raw, text } = readStateJson(given, MAX_STATE_CHARS);
  const kind = typeof raw === 'object' && raw !== null ? (raw as { kind?: unknown }).kind : undefined;
  if (kind !== 'toolrun/paused-agent') {
    const hint = kind === 'toolrun/paused-batch' ? ' (it is a paused batch: resume it with runTools, not runAgent)' : '';
    throw new ResumeError('malformed', `resume.state is not a paused-agent state (its kind is not "toolrun/paused-agent")${hint}: ${describeValue(raw)}`);
  }
  const version = (raw as { version?: unknown }).version;
  if (version !== 1) throw new ResumeError('version', `resume.state has version ${describeValue(version)}; this toolrun reads version 1`);
  const parsed = v.safeParse(State, raw);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    throw new ResumeError('malformed', `resume.state is malformed at ${v.getDotPath(issue) ?? '(root)'}: ${issue.message}`);
  }
  const state = parsed.output;
  if (secret !== undefined) {
    if (state.signature === undefined) throw new ResumeError('signature', 'resume.state is not signed, and this run has a signingSecret: it resumes only states signed with it');
    if (!(await verifyStateText(raw as Record<string, unknown>, state.signature, secret))) {
      throw new ResumeError('signature', 'resume.state has a signature that does not match its content and this signingSecret: it was changed, or signed with another secret');
    }
  }
  if (!state.message.content.some((block) => block.type === 'toolCall')) throw new ResumeError('malformed', 'resume.state is inconsistent: the paused message has no tool call');
  return {
    turn: state.turn,
    messages: state.messages as AgentMessage[],
    message: state.message as AssistantMessage,
    batch: state.batch as unknown as PausedBatchState,
  };
}

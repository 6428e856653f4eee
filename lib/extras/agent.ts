/**
 * The agent loop, in `agent/`:
 *
 * | file | what |
 * | --- | --- |
 * | `agent/messages.ts` | messages, the model seam, events and result (types, `toolCallsOf`, `assistantText`); no dependency on the loop |
 * | `agent/loop.ts` | `runAgent`: the loop over turns, its options and their checks |
 * | `agent/paused-state.ts` | the JSON state of a run paused for approval: built at the pause, checked when it resumes |
 * | `agent/turn.ts` | one turn: the model's reply, then its tool batch (streamed replies run side by side with it, S4) |
 * | `agent/model-stream.ts` | reading a streamed reply, assembling its message |
 * | `agent/scripted-model.ts` | `scriptedModel`, a model that plays a script (tests, demos, replays) |
 * | `agent/agent-messages.ts` | the loop's messages to and from Anthropic's and Chat Completions' (`toAnthropicMessages`, `fromAnthropicMessage`, …) |
 * | `agent/openai-responses-messages.ts` | the same for the OpenAI Responses API's items |
 *
 * @module
 */
export { assistantText, toolCallsOf } from './agent/messages.ts';
export type {
  AgentEndEvent,
  AgentEndReason,
  AgentEvent,
  AgentMessage,
  AgentMessageEvent,
  AgentModel,
  AgentResult,
  AssistantContent,
  AssistantMessage,
  MessageUpdateEvent,
  ModelContext,
  ModelReply,
  ModelStream,
  ModelStreamEvent,
  PausedAgent,
  PausedAgentBody,
  PausedAgentState,
  StopReason,
  ThinkingContent,
  ToolCallContent,
  TurnEndEvent,
  TurnStartEvent,
  UserMessage,
} from './agent/messages.ts';
export { DEFAULT_MAX_TURNS, runAgent } from './agent/loop.ts';
export type { AgentResumeOptions, RunAgentOptions } from './agent/loop.ts';
export { scriptedModel } from './agent/scripted-model.ts';

/**
 * toolrun: runs the tool calls of one LLM assistant message.
 *
 * @module
 */
export { contentBlockText, normalizeToolOutput, textContent } from './core/values/content.ts';
export { defineTool } from './core/schema/define-tool.ts';
export type { AudioContent, ContentBlock, EmbeddedResourceContent, ImageContent, JsonSchema, ResourceLinkContent, TextContent } from './core/tool/content.ts';
export type { InferInput, InputSchema, NeedsApprovalContext, Tool, ToolCall, ToolContext, ToolDefinition, ToolDetailsOf, ToolExecute, ToolResult, ToolResultMessage } from './core/tool/tool.ts';
export { NO_CLIENT } from './core/values/client.ts';
export type {
  ToolCallerAuth,
  ToolClient,
  ToolElicitRequest,
  ToolElicitResult,
  ToolLogLevel,
  ToolSampleMessage,
  ToolSampleRequest,
  ToolSampleResult,
} from './core/tool/client.ts';
export type { CallOutcome } from './core/tool/tool.ts';
export type { ToolApprovalRequestEvent, ToolBatch, ToolEvent, ToolExecutionEndEvent, ToolExecutionStartEvent, KnownToolEvent, ToolExecutionUpdateEvent, ToolResultEvent, ToolResultMessageOf } from './core/run/events.ts';
export type {
  AfterToolCallContext,
  AfterToolCallResult,
  BeforeToolCallContext,
  BeforeToolCallResult,
  RunToolsOptions,
} from './core/run/options.ts';
export type { BatchTrace, BatchTraceEnd, BatchTraceStart, CallTrace, CallTraceOutcome, CallTraceStart, RunTracing, TraceHeaders } from './core/seams/tracing.ts';
export { runTools } from './core/run/run-tools.ts';
export { JournalError } from './core/seams/journal.ts';
export type {
  AgentJournal,
  InterruptedCallPolicy,
  JournalCall,
  JournaledDecision,
  JournaledResult,
  JournalEntry,
  JournalOperation,
  JournalPrior,
  JournalValueEntry,
  ToolJournal,
} from './core/seams/journal.ts';
export { ResumeError } from './core/approval/approval.ts';
export { inMemoryClaim } from './core/approval/claims.ts';
export type { StateClaim, StateClaimInfo } from './core/approval/claims.ts';
export type { StateEnvelope, StateKind } from './core/approval/state-envelope.ts';
export type {
  PausedBatch,
  PausedBatchBody,
  PausedBatchState,
  PausedCall,
  ResumeErrorCode,
  ResumeOptions,
  StandingDecision,
  ToolApprovalHandler,
  ToolApprovalRequest,
  ToolApprovalResponse,
} from './core/approval/approval.ts';
export { mergeGenerators } from './core/streams/merge.ts';
export type { MergeItem, MergeOptions, MergeSource, MergeSourceList } from './core/streams/merge.ts';
export { ReorderBuffer } from './core/streams/reorder-buffer.ts';
export type { ReorderBufferOptions } from './core/streams/reorder-buffer.ts';
export { fromAnthropic, toAnthropic } from './formats/anthropic.ts';
export type { AnthropicImageBlock, AnthropicMessageInput, AnthropicTextBlock, AnthropicToolResultBlock, AnthropicToolResultMessage } from './formats/anthropic.ts';
export { fromOpenAIChat, toOpenAIChat } from './formats/openai-chat.ts';
export type { OpenAIChatMessageInput, OpenAIChatToolMessage } from './formats/openai-chat.ts';
export { fromOpenAIResponses, toOpenAIResponses } from './formats/openai-responses.ts';
export type { OpenAIResponsesFunctionCallOutput, OpenAIResponsesInput } from './formats/openai-responses.ts';
export {
  PROVIDER_TOOL_NAME,
  providerToolNames,
  toAnthropicTools,
  toGeminiTools,
  toOpenAIChatTools,
  toOpenAIResponsesTools,
} from './formats/tool-definitions.ts';
export type {
  AnthropicToolDefinition,
  GeminiFunctionDeclaration,
  GeminiToolDefinition,
  ObjectJsonSchema,
  OpenAIChatToolDefinition,
  OpenAIResponsesToolDefinition,
  OpenAIToolDefinitionsOptions,
  ToolDefinitionsOptions,
  ToolNames,
} from './formats/tool-definitions.ts';
export { inputJsonSchema, toolJsonSchema } from './core/schema/json-schema.ts';
export { withJsonSchema } from './schemas/with-json-schema.ts';
export { bfclGroundTruthArguments, convertBfclSchema } from './schemas/bfcl.ts';
export { mcpContent, mcpTools } from './mcp/client/tools.ts';
export type { McpCallToolResult, McpClientLike, McpProgress, McpRequestOptions, McpToolInfo, McpToolsOptions } from './mcp/client/tools.ts';
export { fromAnthropicStream } from './formats/anthropic-stream.ts';
export { fromOpenAIChatStream } from './formats/openai-chat-stream.ts';
export { fromOpenAIResponsesStream } from './formats/openai-responses-stream.ts';
export { StreamBrokenError } from './formats/stream-calls.ts';
export type { ToolCallStreamEnd, ToolCallStreamOptions, ToolCallStreamStatus } from './formats/stream-calls.ts';
export { parseSSE } from './formats/sse.ts';
export type { ProviderStream, ServerSentEvent, SSEChunks } from './formats/sse.ts';
export { EventStreamError, fromEventStream, toEventStream } from './formats/event-stream.ts';
export type { EventStreamBody, EventStreamEnd, EventStreamErrorCode, EventStreamSource, FromEventStreamOptions, ToEventStreamOptions } from './formats/event-stream.ts';
export { callTool, mapProgress, pipeEvents, resultText, ToolInputError, withRetry, withTimeout } from './extras/compose.ts';
export type { CallToolOptions, NormalizedOutput, RetryOptions, ToolInputOf, ToolNameOf, ToolOutputOf, ToolProgressOf, WithTimeoutOptions } from './extras/compose.ts';
export { assistantText, DEFAULT_MAX_TURNS, runAgent, toolCallsOf } from './extras/agent.ts';
export type {
  AgentEndEvent,
  AgentEndReason,
  AgentEvent,
  AgentMessage,
  AgentMessageEvent,
  AgentModel,
  AgentResult,
  AgentResumeOptions,
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
  RunAgentOptions,
  StopReason,
  ThinkingContent,
  ToolCallContent,
  TurnEndEvent,
  TurnStartEvent,
  UserMessage,
} from './extras/agent.ts';
export { agentTool, agentToolInput } from './extras/agent-tool.ts';
export type { AgentToolDetails, AgentToolOptions, AgentToolProgress, AgentToolProgressOf } from './extras/agent-tool.ts';
export { fromAnthropicMessage, fromOpenAIChatMessage, toAnthropicMessages, toOpenAIChatMessages } from './extras/agent/agent-messages.ts';
export type { AnthropicAssistantBlock, AnthropicImageMediaType, AnthropicMessageParam, AnthropicRequestImageBlock, AnthropicRequestToolResultBlock, OpenAIChatMessageParam } from './extras/agent/agent-messages.ts';

// ---------------------------------------------------------------------------------------
// Tools from other ecosystems (lib/adapters) and more provider formats (Gemini F5, AI SDK
// messages F6, OpenAI Responses agent history). None of these loads a peer package.
export { fromAISDKTools, toAISDKTools } from './adapters/ai-sdk.ts';
export type {
  AISDKApprovalToolCall,
  AISDKModelOutput,
  AISDKOutputOf,
  AISDKPreliminaryOf,
  AISDKSingleToolApproval,
  AISDKTool,
  AISDKToolSet,
  AISDKToolApproval,
  AISDKToolApprovalStatus,
  AISDKToolExecutionOptions,
  AISDKToolLike,
  AISDKToolOutput,
  FromAISDKTool,
  FromAISDKTools,
  FromAISDKToolsOptions,
  FromAISDKToolsResult,
  ToAISDKToolsOptions,
} from './adapters/ai-sdk.ts';
export { toUIMessageStream } from './adapters/ai-sdk-ui-stream.ts';
export type { AISDKUIMessageChunk, ToUIMessageStreamOptions, UIToolResult } from './adapters/ai-sdk-ui-stream.ts';
export type { ForeignFunction } from './adapters/shared.ts';
export { fromOpenAIAgentsTools } from './adapters/openai-agents.ts';
export type { FromOpenAIAgentsTool, FromOpenAIAgentsToolsOptions, FromOpenAIAgentsToolsResult, OpenAIAgentsToolLike } from './adapters/openai-agents.ts';
export { fromLangChainTools } from './adapters/langchain.ts';
export type { FromLangChainTool, FromLangChainToolsOptions, LangChainToolLike } from './adapters/langchain.ts';
export { fromGemini, GEMINI_SYNTHESIZED_ID_PREFIX, toGemini } from './formats/gemini.ts';
export type { GeminiFunctionResponseContent, GeminiFunctionResponsePart, GeminiInlineDataPart, GeminiInput, ToGeminiOptions } from './formats/gemini.ts';
export { fromAISDKApprovalResponses, fromAISDKMessage, toAISDKApprovalRequests, toAISDKMessages } from './formats/ai-sdk-messages.ts';
export type {
  AISDKAssistantMessageInput,
  AISDKImageOutputPart,
  AISDKToolApprovalRequestPart,
  AISDKToolApprovalResponsePart,
  AISDKToolModelMessage,
  AISDKToolResultOutput,
  AISDKToolResultPart,
  AISDKVersion,
  PausedRequests,
  ToAISDKMessagesOptions,
} from './formats/ai-sdk-messages.ts';
export { fromOpenAIResponsesMessage, toOpenAIResponsesMessages } from './extras/agent/openai-responses-messages.ts';
export type { OpenAIResponsesFunctionCallItem, OpenAIResponsesInputItem, OpenAIResponsesReply, OpenAIResponsesUserContent } from './extras/agent/openai-responses-messages.ts';

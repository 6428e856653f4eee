/**
 * toolrun: runs the tool calls of one LLM assistant message.
 *
 * @module
 */
export { defineTool, normalizeToolOutput, textContent } from './tool.ts';
export type {
  ContentBlock,
  ImageContent,
  InferInput,
  InputSchema,
  JsonSchema,
  TextContent,
  Tool,
  ToolCall,
  ToolContext,
  ToolDefinition,
  ToolExecute,
  ToolResult,
  ToolResultMessage,
} from './tool.ts';
export type {
  CallOutcome,
  ToolBatch,
  ToolEvent,
  ToolExecutionEndEvent,
  ToolExecutionStartEvent,
  ToolExecutionUpdateEvent,
  ToolResultEvent,
} from './events.ts';
export type {
  AfterToolCallContext,
  AfterToolCallResult,
  BeforeToolCallContext,
  BeforeToolCallResult,
  RunToolsOptions,
} from './options.ts';
export { runTools } from './run-tools.ts';
export { mergeGenerators } from './streams/merge.ts';
export type { MergeItem, MergeOptions } from './streams/merge.ts';
export { ReorderBuffer } from './streams/reorder-buffer.ts';
export { fromAnthropic, toAnthropic } from './formats/anthropic.ts';
export { fromOpenAIChat, toOpenAIChat } from './formats/openai-chat.ts';
export { fromOpenAIResponses, toOpenAIResponses } from './formats/openai-responses.ts';

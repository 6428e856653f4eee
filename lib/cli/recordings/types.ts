/**
 * What the corpus loaders hand to the replay: recorded assistant messages with their tool
 * calls, the tool definitions recorded with them, and the follow-up the recording's
 * framework sent back.
 *
 * @module
 */
import type { JsonSchema } from '../../core/tool/content.ts';
import type { ToolCall } from '../../core/tool/tool.ts';

/** A tool definition as recorded in a request (`tools`), reduced to what the replay needs. */
export interface RecordedTool {
  name: string;
  /** The recorded JSON Schema of the input (converted for BFCL); `{ type: 'object' }` when none was recorded. */
  schema: JsonSchema;
}

/**
 * The wire formats a follow-up can be recorded in. The first three are produced with
 * toolrun's adapters (contract F1–F3); `gemini` is produced in the recordings' own shape
 * (not with `toGemini`, F5: see `compare.ts`) and kept for contrast.
 */
export type WireFormat = 'anthropic' | 'openai-chat' | 'openai-responses' | 'gemini';

/** The recorded answer to one assistant message, exactly as the framework sent it. */
export interface RecordedFollowUp {
  format: WireFormat;
  /**
   * The recorded wire value: for `anthropic` the one user message after the assistant
   * message; for `openai-chat` the consecutive `role: "tool"` messages; for
   * `openai-responses` the consecutive `function_call_output` items; for `gemini` the
   * `functionResponse` parts of the next user content.
   */
  wire: unknown;
  /**
   * The call ids of the assistant message as the framework wrote it back into history, in
   * order. Usually the model's ids; shorter when the framework dropped calls (crewAI), other
   * ids when it rewrote them (pydantic-ai on Bedrock, on Gemini which sends none).
   */
  historyCallIds: string[];
  /** Where it was found, e.g. "request of interaction 2". */
  source: string;
}

/** One assistant message of a recording that holds at least one tool call. */
export interface RecordedMessage {
  /** Where in the file: "interaction 0", "message msg_… (line 34)", "entry parallel_0". */
  label: string;
  /** The calls, in the order the model wrote them. */
  calls: ToolCall[];
  /** The tool definitions sent with the request; `undefined` when the recording has none (any object arguments accepted). */
  tools: RecordedTool[] | undefined;
  /** The recorded follow-up, or why there is none. */
  followUp: RecordedFollowUp | { none: string };
  /**
   * Irregularities of the recording itself, found while loading, each one line: they turn
   * a message into `explained` (never a plain match).
   */
  notes: string[];
  /** The response as it was streamed, when the recording kept the stream (`replay --stream` replays it). */
  stream?: RecordedStream;
}

/** A streamed response as recorded: its server-sent events in order (`{ event?, data }` or bare event objects). */
export interface RecordedStream {
  format: 'anthropic' | 'openai-chat' | 'openai-responses';
  events: unknown[];
}

/** A loaded recording file. */
export interface LoadedRecording {
  /** Human name of the detected format, e.g. "Anthropic Messages cassette". */
  format: string;
  messages: RecordedMessage[];
  /** Files consumed with this one (a BFCL question file's possible_answer file). */
  companions: string[];
  /** Problems with parts of the file that could not be replayed (each one line). */
  warnings?: string[];
}

/** The permissive schema used when a recording has no tool definitions: any object. */
export const ANY_OBJECT_SCHEMA: JsonSchema = Object.freeze({ type: 'object' });

/**
 * Google Gemini (`generateContent`, Gemini API and Vertex AI) adapter (contract F5).
 *
 * - {@link fromGemini}: the `functionCall` parts of a model content → {@link ToolCall}s.
 * - {@link toGemini}: toolrun's results → the ONE content of `functionResponse` parts that
 *   answers them, in call order.
 *
 * Provider rule this follows: Gemini's function calls often carry no id at all — a recorded
 * reply holds three identical `generate_topic` calls with no ids (corpus file
 * `other/pydantic-ai__gemini_three_identical_calls_no_ids.json`) — so a response is matched to
 * its call by position (and name), never by id: one `functionResponse` per call, in the
 * calls' order, with the call's name (O1).
 *
 * @module
 */
import type { ToolCall, ToolResultMessage } from '../core/tool/tool.ts';
import { describeValue } from '../core/values/guards.ts';
import { contentToText, toolName } from './shared.ts';
import { isObjectRecord } from '../core/values/guards.ts';

/**
 * What {@link fromGemini} accepts: a model content `{ role: 'model', parts }`, or a whole
 * `generateContent` response body (`{ candidates: [{ content }] }`; the first candidate is
 * read). The `@google/genai` SDK's `Content` and `GenerateContentResponse` fit.
 */
export type GeminiInput =
  | { readonly role?: string | undefined; readonly parts?: readonly unknown[] | undefined }
  | { readonly candidates?: readonly unknown[] | undefined };

/** The prefix of the ids {@link fromGemini} makes for calls that came without one. */
export const GEMINI_SYNTHESIZED_ID_PREFIX = 'gemini-call-';

/** An inline image part of a function response (`images: 'parts'`). */
export interface GeminiInlineDataPart {
  inlineData: { mimeType: string; data: string };
}

/** One `functionResponse` part. */
export interface GeminiFunctionResponsePart {
  functionResponse: {
    /** The call's id, when the model gave one; absent for calls that came without an id. */
    id?: string;
    name: string;
    /** `{ output: text }`, or `{ error: text }` for an error result (the API's documented keys). */
    response: { output: string } | { error: string };
    /** Images of the result, with `images: 'parts'` (multimodal function responses, Gemini 3 models). */
    parts?: GeminiInlineDataPart[];
  };
}

/** The content that answers a model content's function calls. */
export interface GeminiFunctionResponseContent {
  role: 'user' | 'function';
  parts: GeminiFunctionResponsePart[];
}

/** Options of {@link toGemini}. */
export interface ToGeminiOptions {
  /**
   * The role of the content: `'user'` (the Gemini API, `@google/genai`) or `'function'`
   * (older Vertex AI samples).
   * @default 'user'
   */
  role?: 'user' | 'function';
  /**
   * Where images of a result go: `'placeholder'` puts a short text in `output` (every model
   * takes it); `'parts'` sends them as `inlineData` parts of the function response, which
   * only models with multimodal function responses accept.
   * @default 'placeholder'
   */
  images?: 'placeholder' | 'parts';
}

/**
 * Reads the function calls of a Gemini model content or `generateContent` response.
 *
 * Returns one {@link ToolCall} per part with a `functionCall`, in part order: `name` (one
 * that is not a string becomes `''`, never its `String()`: `runTools` answers "no tool
 * name" and runs nothing), `arguments` = `args` (an object; absent when the part has none). `id`: the
 * `functionCall.id` when the model gave a non-empty one (Vertex AI, newer models), else a
 * synthesized `gemini-call-<n>` where `<n>` is the call's position among the message's
 * calls (0-based). Synthesized ids are unique within one message and repeat across turns;
 * toolrun pairs by position (O1), and {@link toGemini} leaves them out. Text, thought and
 * `thoughtSignature` fields are not tool calls and are ignored (send the model content back
 * unchanged to keep the signatures).
 *
 * @throws TypeError when `content` is not an object, or `parts` / `candidates` is not an array.
 *
 * @example
 * ```ts
 * const response = await ai.models.generateContent({ model, contents, config: { tools } });
 * const results: ToolResultMessage[] = [];
 * for await (const event of runTools(fromGemini(response), { tools: mine })) {
 *   if (event.type === 'tool_result') results.push(event.message);
 * }
 * contents.push(response.candidates[0].content, toGemini(results));
 * ```
 */
export function fromGemini(content: GeminiInput): ToolCall[] {
  if (!isObjectRecord(content)) throw new TypeError(`fromGemini: expected a model content or a generateContent response, received ${describeValue(content)}`);
  const body = content as Record<string, unknown>;
  let parts: unknown = body.parts;
  if ('candidates' in body) {
    if (!Array.isArray(body.candidates)) throw new TypeError(`fromGemini: expected \`candidates\` to be an array, received ${describeValue(body.candidates)}`);
    const first: unknown = body.candidates[0];
    parts = isObjectRecord(first) && isObjectRecord(first.content) ? first.content.parts : undefined;
  }
  if (parts === undefined) return [];
  if (!Array.isArray(parts)) throw new TypeError(`fromGemini: expected \`parts\` to be an array, received ${describeValue(parts)}`);
  const calls: ToolCall[] = [];
  for (const part of parts as unknown[]) {
    if (!isObjectRecord(part) || !isObjectRecord(part.functionCall)) continue;
    const fc = part.functionCall;
    const id = typeof fc.id === 'string' && fc.id !== '' ? fc.id : `${GEMINI_SYNTHESIZED_ID_PREFIX}${calls.length}`;
    const call: ToolCall = { id, name: toolName(fc.name) };
    if (fc.args !== undefined) call.arguments = fc.args;
    calls.push(call);
  }
  return calls;
}

/**
 * Builds the content that answers a model content's function calls: one `functionResponse`
 * part per result, in the order given (toolrun's results are in call order), each with the
 * call's `name` (F5).
 *
 * `response` is `{ output: text }`, or `{ error: text }` for an error result — the keys the
 * API documents for a function's output and its error; text blocks are joined with `"\n"`.
 * Audio and resource blocks are sent as the text `contentBlockText` writes. Images: see {@link ToGeminiOptions.images}. The
 * result messages are not checked at run time as `toAnthropic` checks them: a non-array
 * `results` or `content` throws a `TypeError`. `id` is copied only from ids the model gave;
 * an id {@link fromGemini} synthesized is left out, so the model never sees an id it did not
 * write. `details` is never sent.
 *
 * @example
 * ```ts
 * toGemini([{ role: 'tool', toolCallId: 'gemini-call-0', toolName: 'get_time', content: [{ type: 'text', text: '12:00' }], isError: false }]);
 * // { role: 'user', parts: [{ functionResponse: { name: 'get_time', response: { output: '12:00' } } }] }
 * ```
 */
export function toGemini(results: readonly ToolResultMessage[], options: ToGeminiOptions = {}): GeminiFunctionResponseContent {
  const images = options.images ?? 'placeholder';
  return {
    role: options.role ?? 'user',
    parts: results.map((result) => {
      const content = images === 'parts' ? result.content.filter((b) => b.type !== 'image') : result.content;
      const text = contentToText(content);
      const functionResponse: GeminiFunctionResponsePart['functionResponse'] = {
        name: result.toolName,
        response: result.isError ? { error: text } : { output: text },
      };
      if (result.toolCallId !== '' && !isSynthesizedId(result.toolCallId)) functionResponse.id = result.toolCallId;
      if (images === 'parts') {
        const parts = result.content.flatMap((b) => (b.type === 'image' ? [{ inlineData: { mimeType: b.mimeType, data: b.data } }] : []));
        if (parts.length > 0) functionResponse.parts = parts;
      }
      return { functionResponse };
    }),
  };
}

function isSynthesizedId(id: string): boolean {
  return id.startsWith(GEMINI_SYNTHESIZED_ID_PREFIX) && /^\d+$/.test(id.slice(GEMINI_SYNTHESIZED_ID_PREFIX.length));
}

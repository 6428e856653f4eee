/**
 * OpenAI Agents SDK (`@openai/agents`) function tools → toolrun tools.
 *
 * Only the SDK's shapes are used (no import of `@openai/agents`): the library never loads it.
 *
 * @module
 */
import type { StandardJSONSchemaV1, StandardSchemaV1 } from '@standard-schema/spec';
import { compileJsonSchema } from '../core/schema/json-schema-validator.ts';
import type { ContentBlock, JsonSchema } from '../core/tool/content.ts';
import type { InputSchema, NeedsApprovalContext, Tool, ToolCall, ToolContext, ToolResult } from '../core/tool/tool.ts';
import { RuleDenial } from '../core/run/stages/outcome.ts';
import { describeValue } from '../core/values/guards.ts';
import { assertObjectSchema, imageBlock, outputText, refuseAdapterApprove, type ForeignFunction } from './shared.ts';
import { lenientStrictSchema } from './strict-schema.ts';

/**
 * The fields of an Agents SDK `FunctionTool` (what `tool({ … })` returns) that
 * {@link fromOpenAIAgentsTools} reads.
 */
export interface OpenAIAgentsToolLike {
  readonly type: string;
  readonly name: string;
  readonly description?: string | undefined;
  /** The JSON Schema the SDK built from `parameters` (zod or JSON Schema); strict schemas have every property required and `additionalProperties: false`. */
  readonly parameters?: JsonSchema | undefined;
  readonly strict?: boolean | undefined;
  /** Present on function tools (hosted tools have none and are skipped). */
  readonly invoke?: ForeignFunction<[runContext: unknown, input: string, details?: unknown], Promise<unknown>> | undefined;
  /** `tool()` always sets it (`needsApproval: true` becomes a function answering `true`); a truthy answer asks, as in the SDK's runner. */
  readonly needsApproval?: ForeignFunction<[runContext: unknown, input: unknown, callId?: string], Promise<boolean>> | undefined;
}

/** Options of {@link fromOpenAIAgentsTools}. */
export interface FromOpenAIAgentsToolsOptions {
  /**
   * The run context handed to `invoke` and `needsApproval`: pass `new RunContext(yourContext)`
   * from `@openai/agents` when the tools read more than `context`.
   * @default `{ context: undefined }`
   */
  runContext?: unknown;
}

/**
 * The toolrun tool {@link fromOpenAIAgentsTools} makes of the Agents SDK tool `P`: the input
 * type its `needsApproval` is declared with (`tool()` types it with the parameters' type), no
 * progress, a `ToolResult` whose `details` are what `invoke` resolves to (`string | Result`),
 * and the name `P` declares: the SDK types every `FunctionTool`'s name as `string`, so the
 * name is a literal only for a tool whose type says so.
 */
export type FromOpenAIAgentsTool<P> = P extends { readonly type: 'function'; readonly name: infer N extends string }
  ? Tool<
      P extends {
        /** The parameters' type, read from the SDK's `needsApproval`. */
        readonly needsApproval?: (runContext: never, input: infer I, ...rest: never[]) => unknown;
      }
        ? I
        : unknown,
      never,
      ToolResult<
        P extends {
          /** What the SDK's `invoke` resolves to: the result's `details`. */
          readonly invoke?: (...args: never[]) => Promise<infer R>;
        }
          ? R
          : unknown
      >,
      N
    >
  : never;

/** What {@link fromOpenAIAgentsTools} returns; `T` is the union of the adapted tools' types ({@link FromOpenAIAgentsTool}). */
export interface FromOpenAIAgentsToolsResult<T extends Tool = Tool> {
  /** One toolrun tool per function tool, in order; a tool with an SDK `needsApproval` carries it as its own (contract H1). */
  tools: T[];
  /** Names of the tools left out because they are not function tools (hosted tools, computer, shell…). */
  skipped: string[];
}

/**
 * Turns OpenAI Agents SDK function tools into toolrun tools.
 *
 * What maps (see docs/guide/tools-from-elsewhere.md, "OpenAI Agents SDK"):
 * - `name`, `description`; `parameters` (the JSON Schema the SDK made from a zod or JSON
 *   Schema definition, strict or not) → `input`: the model is sent it unchanged. The
 *   arguments are checked before `invoke` as the SDK's own parser reads them: against a strict
 *   schema leniently (unknown keys pass — zod strips them —, a key that may be `null` may be
 *   absent — an optional zod key), so a call is refused here only for what the tool's own
 *   parser refuses too, with an error result listing what to fix (P5); a `strict: false`
 *   schema (the SDK only `JSON.parse`s) as declared;
 * - the call runs as `invoke(runContext, argumentsJson, { toolCall, signal })`: the
 *   arguments as JSON text, which the tool's own parser reads as it always does (a refusal
 *   there is its `errorFunction`'s text, as in the SDK); `toolCall` is the model's own
 *   `function_call` item when the call carries it (`ToolCall.providerItem`, kept by
 *   `fromOpenAIResponses` and `fromOpenAIResponsesStream`): a Responses item in the SDK's
 *   shape (`callId`, `id`, `status`, `providerData`), an Agents SDK item as it is; otherwise
 *   one made from the call (`callId` = the toolrun call id); `signal` is the call's signal;
 * - the output: a string as text; `{ type: 'text' }` / `{ type: 'image' }` outputs (or an
 *   array of them) as content blocks (images with base64 `data`; an image given by URL or
 *   file id becomes a short text); anything else as JSON text. The raw output is `details`;
 * - `needsApproval(runContext, input, callId)` → the tool's own `needsApproval` (contract
 *   H1), called with the `runContext` option, the validated arguments and the call id; a
 *   truthy answer asks, as in the SDK's runner. So `runTools(calls, { tools })` alone pauses a
 *   call that needs approval (`ToolBatch.paused`, as the SDK's run stops with
 *   `interruptions`), and with `runTools`' `approve` it is asked; toolrun's wrappers
 *   (`withTimeout`, `withRetry`, `mapProgress`) keep the rule;
 * - decisions recorded in the `runContext` option (`RunContext.approveTool` /
 *   `rejectTool`, per call or with `alwaysApprove` / `alwaysReject`; `RunState.approve` /
 *   `reject` record there too) answer a call the rule asks about, as the SDK's runner reads
 *   them (`isToolApproved({ toolName, callId })`): approved, it runs; rejected, it is refused
 *   with the context's rejection message; neither, toolrun's `approve` is asked or the batch
 *   pauses (contract H12). So in one batch one call can wait while the context answers others.
 *
 * Not mapped: a thrown error inside `invoke` is turned into text by the tool's own
 * `errorFunction` (the SDK's default says "An error occurred while running the tool…"),
 * and that text is a normal result; `timeoutMs` is enforced inside `invoke`; `isEnabled`,
 * guardrails and `deferLoading` are not consulted.
 *
 * @throws TypeError naming the tool when its `parameters` are not an object schema or
 *   `invoke` is missing; when `options.approve` is given (approval is decided by
 *   `runTools`: pass `approve` there).
 *
 * @example
 * ```ts
 * const { tools } = fromOpenAIAgentsTools([getWeather, sendEmail]);
 * // sendEmail has needsApproval: true — asked here; without `approve` the batch pauses with its request.
 * const approve = async (request) => ({ approvalId: request.approvalId, approved: await askUser(request) });
 * for await (const event of runTools(calls, { tools, approve })) console.log(event.type);
 * ```
 */
export function fromOpenAIAgentsTools<const P extends readonly OpenAIAgentsToolLike[]>(
  peers: P,
  options: FromOpenAIAgentsToolsOptions = {},
): FromOpenAIAgentsToolsResult<FromOpenAIAgentsTool<P[number]>> {
  if (!Array.isArray(peers)) {
    throw new TypeError(`fromOpenAIAgentsTools: expected an array of tools, received ${describeValue(peers)}`);
  }
  refuseAdapterApprove('fromOpenAIAgentsTools', options);
  const runContext = options.runContext ?? { context: undefined };
  const tools: Tool[] = [];
  const skipped: string[] = [];
  for (const peer of peers as readonly OpenAIAgentsToolLike[]) {
    if (typeof peer !== 'object' || peer === null) {
      throw new TypeError(`fromOpenAIAgentsTools: a tool must be an object, received ${describeValue(peer)}`);
    }
    if (peer.type !== 'function') {
      skipped.push(String(peer.name));
      continue;
    }
    if (typeof peer.invoke !== 'function') {
      throw new TypeError(`fromOpenAIAgentsTools: tool "${peer.name}".invoke must be a function, received ${describeValue(peer.invoke)}`);
    }
    if (typeof peer.parameters !== 'object' || peer.parameters === null) {
      throw new TypeError(`fromOpenAIAgentsTools: tool "${peer.name}".parameters must be a JSON Schema object, received ${describeValue(peer.parameters)}`);
    }
    assertObjectSchema('fromOpenAIAgentsTools', peer.name, peer.parameters);
    const invoke = peer.invoke.bind(peer);
    const rule = peer.needsApproval;
    const tool: Tool = {
      name: peer.name,
      ...(peer.description !== undefined ? { description: peer.description } : {}),
      input: agentsInput(peer.parameters, peer.strict !== false),
      ...(typeof rule === 'function'
        ? {
            needsApproval: async (input: unknown, { toolCall }: NeedsApprovalContext) =>
              Boolean(await rule.call(peer, runContext, input, toolCall.id)) && recordedDecision(runContext, peer.name, toolCall.id),
          }
        : {}),
      async execute(args: unknown, context: ToolContext): Promise<ToolResult> {
        const json = JSON.stringify(args ?? {});
        const toolCall = agentsCallItem(context, peer.name, json);
        const output = await invoke(runContext, json, { toolCall, signal: context.signal });
        return { content: agentsOutputContent(output), details: output };
      },
    };
    tools.push(tool);
  }
  // Each tool runs its peer's invoke and keeps its output as details: the types FromOpenAIAgentsTool reads.
  return { tools: tools as Array<FromOpenAIAgentsTool<P[number]>>, skipped };
}

/**
 * A call the tool's rule says needs approval, looked up in the SDK's run context as its
 * runner looks it up (`isToolApproved({ toolName, callId })`): approved there, it runs
 * (`false`: no approval needed); rejected there, it is refused with the context's rejection
 * message (a {@link RuleDenial}); neither, it needs toolrun's approval (`true`): `approve`
 * is asked, or the batch pauses. A context without `isToolApproved` (a plain object) records
 * nothing. A throw there is the rule's throw (the call is rejected, P4).
 */
function recordedDecision(runContext: unknown, toolName: string, callId: string): boolean {
  const context = runContext as { isToolApproved?: unknown; getRejectionMessage?: unknown } | null;
  if (typeof context !== 'object' || context === null || typeof context.isToolApproved !== 'function') return true;
  const decision: unknown = (context.isToolApproved as (a: { toolName: string; callId: string }) => unknown).call(context, { toolName, callId });
  if (decision === true) return false;
  if (decision !== false) return true;
  const message: unknown = typeof context.getRejectionMessage === 'function' ? (context.getRejectionMessage as (n: string, c: string) => unknown).call(context, toolName, callId) : undefined;
  throw new RuleDenial(
    `A person denied this call to tool "${toolName}" (recorded in the OpenAI Agents run context), so it was not run.` +
      (typeof message === 'string' && message !== '' ? ` Their reason: ${JSON.stringify(message)}.` : '') +
      ' Do not try it again unless the user asks you to.',
  );
}

/**
 * The adapted tool's input schema. The model is sent the SDK's own `parameters`, unchanged
 * (`~standard.jsonSchema`). Before `invoke`, a strict tool's arguments are checked against
 * {@link lenientStrictSchema} of them — unknown keys pass, a key that may be `null` may be
 * absent — so that only what the SDK's own parser refuses too is refused here, with one line
 * per problem for the model; `invoke` then parses them with the tool's own parser (zod strips
 * unknown keys). A non-strict tool (`strict: false`, plain JSON Schema: the SDK only
 * `JSON.parse`s) is checked against its schema as declared.
 */
function agentsInput(parameters: JsonSchema, strict: boolean): InputSchema {
  if (!strict) return parameters;
  const lenient = lenientStrictSchema(parameters);
  const jsonSchema = (): Record<string, unknown> => parameters as Record<string, unknown>;
  const schema: StandardSchemaV1<Record<string, unknown>> & StandardJSONSchemaV1<Record<string, unknown>> = {
    '~standard': {
      version: 1,
      vendor: 'openai-agents',
      validate(value) {
        const issues = compileJsonSchema(lenient).issues(value);
        if (issues.length === 0) return { value: value as Record<string, unknown> };
        return { issues: issues.map(issueOf) };
      },
      jsonSchema: { input: jsonSchema, output: jsonSchema },
    },
  };
  return schema;
}

/** A `path: reason` line of the JSON Schema check as a Standard Schema issue (`arguments` is the root). */
function issueOf(line: string): StandardSchemaV1.Issue {
  const at = line.indexOf(': ');
  if (at < 0) return { message: line };
  const path = line.slice(0, at);
  return path === 'arguments' ? { message: line.slice(at + 2) } : { message: line.slice(at + 2), path: path.split('.') };
}

/**
 * The `details.toolCall` handed to `invoke`: the model's own `function_call` item when the
 * call carries it (`ToolCall.providerItem`) — an Agents SDK item (`callId`) as it is, a
 * Responses API output item (`call_id`) in the SDK's shape, as the SDK's OpenAI model
 * converts it (`callId`, `status`, the other fields as `providerData`) — and otherwise one
 * made from the call: `callId` = the toolrun call id, `arguments` = the validated arguments.
 */
function agentsCallItem(context: ToolContext, name: string, json: string): Record<string, unknown> {
  const item = providerItemOf(context.toolCall);
  if (item !== undefined && item.type === 'function_call') {
    if (typeof item.callId === 'string') return item;
    if (typeof item.call_id === 'string') {
      const { call_id: callId, name: itemName, namespace, caller: _caller, status, arguments: args, ...providerData } = item;
      return { type: 'function_call', id: item.id, callId, name: itemName, ...(typeof namespace === 'string' ? { namespace } : {}), status, arguments: args, providerData };
    }
  }
  return { type: 'function_call', callId: context.toolCallId, name, arguments: json };
}

function providerItemOf(call: ToolCall | undefined): Record<string, unknown> | undefined {
  const item = call?.providerItem;
  return typeof item === 'object' && item !== null && !Array.isArray(item) ? (item as Record<string, unknown>) : undefined;
}

/** An Agents SDK tool output → content blocks (see {@link fromOpenAIAgentsTools}). */
function agentsOutputContent(output: unknown): ContentBlock[] {
  const items = Array.isArray(output) && output.every(isTypedOutput) ? output : [output];
  return items.map((item: unknown): ContentBlock => {
    if (!isTypedOutput(item)) return { type: 'text', text: outputText(item) };
    if (item.type === 'text') return { type: 'text', text: outputText((item as { text?: unknown }).text) };
    if (item.type === 'image') {
      const image = (item as { image?: unknown }).image;
      const data = typeof image === 'object' && image !== null ? (image as { data?: unknown; mediaType?: unknown }) : undefined;
      const block = imageBlock(data?.data, data?.mediaType ?? 'image/png');
      if (block !== undefined) return block;
      // A data URL: data:<type>;base64,<data>
      const url = typeof image === 'string' ? /^data:(image\/[\w.+-]+);base64,(.*)$/s.exec(image) : null;
      if (url !== null) return { type: 'image', data: url[2]!, mimeType: url[1]! };
      return { type: 'text', text: `[image omitted: given by reference (${outputText(image).slice(0, 200)}); toolrun results carry base64 images]` };
    }
    return { type: 'text', text: outputText(item) };
  });
}

function isTypedOutput(value: unknown): value is { type: string } {
  return typeof value === 'object' && value !== null && ((value as { type?: unknown }).type === 'text' || (value as { type?: unknown }).type === 'image');
}

/**
 * The JSON copies and digests a paused batch's state is made of, and compared with when it
 * comes back (contract H4, H8): a JSON copy of a value, of a result message, canonical JSON,
 * and the SHA-256 of each tool's input JSON Schema.
 *
 * Portable: Web Crypto only.
 *
 * @module
 */
import { inputJsonSchema } from '../schema/json-schema.ts';
import { isStandardSchema } from '../schema/schema.ts';
import { describeValue } from '../values/guards.ts';
import type { Tool, ToolResultMessage } from '../tool/tool.ts';

/** A JSON copy of `value` (what survives `JSON.stringify`); a value JSON cannot hold becomes its description. */
export function jsonCopy(value: unknown): unknown {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? null : (JSON.parse(text) as unknown);
  } catch {
    return describeValue(value);
  }
}

/** The result message as JSON, a copy sharing nothing with `message`; `details`/`meta` JSON cannot hold are dropped (docs/adr/0014-paused-state.md). */
export function messageCopy(message: ToolResultMessage): ToolResultMessage {
  try {
    return JSON.parse(JSON.stringify(message)) as ToolResultMessage;
  } catch {
    return { role: 'tool', toolCallId: message.toolCallId, toolName: message.toolName, content: jsonCopy(message.content) as ToolResultMessage['content'], isError: message.isError };
  }
}

/** JSON text with every object's keys sorted: the same value always gives the same text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const keys = Object.keys(value).sort();
    const parts: string[] = [];
    for (const key of keys) {
      const item = (value as Record<string, unknown>)[key];
      if (item !== undefined) parts.push(`${JSON.stringify(key)}:${canonicalJson(item)}`);
    }
    return `{${parts.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function hex(bytes: ArrayBuffer): string {
  let text = '';
  for (const byte of new Uint8Array(bytes)) text += byte.toString(16).padStart(2, '0');
  return text;
}

async function sha256(text: string): Promise<string> {
  return hex(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
}

/**
 * Digests of Standard Schemas, by schema: their JSON Schema conversion is made once and
 * cached (`core/schema/json-schema.ts`), so their digest is too. A plain JSON Schema object may be
 * edited in place, so its digest is computed each time.
 */
const standardDigests = new WeakMap<object, string>();

/** Per tool name, the SHA-256 of its input JSON Schema (canonical JSON). */
export async function toolDigests(tools: ReadonlyMap<string, Tool>): Promise<Record<string, string>> {
  const digests: Record<string, string> = {};
  for (const [name, tool] of tools) {
    const standard = isStandardSchema(tool.input) ? tool.input : undefined;
    const cached = standard !== undefined ? standardDigests.get(standard) : undefined;
    if (cached !== undefined) {
      digests[name] = cached;
      continue;
    }
    let schema: unknown;
    try {
      schema = inputJsonSchema(tool.input, name);
    } catch {
      // A Standard Schema with no converter: its vendor is all that can be compared.
      schema = { unconvertible: (tool.input as { '~standard'?: { vendor?: unknown } })['~standard']?.vendor ?? null };
    }
    const digest = await sha256(canonicalJson(schema));
    if (standard !== undefined) standardDigests.set(standard, digest);
    digests[name] = digest;
  }
  return digests;
}

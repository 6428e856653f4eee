/**
 * A tiny trace collector for the example: an HTTP server on 127.0.0.1 that takes OTLP/HTTP
 * JSON exports (`POST /v1/traces`, what `@opentelemetry/exporter-trace-otlp-http` sends)
 * from the three processes and keeps their spans in memory, and {@link traceTree}, which
 * draws them as one tree per trace. In production the exporters would point at an
 * OpenTelemetry Collector, Jaeger or any OTLP backend instead.
 *
 * @module
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as v from 'valibot';

/** One span as the collector keeps it. */
export interface CollectedSpan {
  /** The `service.name` resource attribute of the process that sent it. */
  service: string;
  traceId: string;
  spanId: string;
  /** `undefined` for a root span. */
  parentSpanId: string | undefined;
  name: string;
  /** Nanoseconds since the Unix epoch. */
  startTimeUnixNano: bigint;
  attributes: Record<string, string | number | boolean>;
}

/** A running collector. */
export interface Collector {
  /** Where exporters send spans, e.g. `http://127.0.0.1:41234/v1/traces`. */
  readonly url: string;
  /** Every span received so far, in arrival order. */
  readonly spans: readonly CollectedSpan[];
  /** Stops listening and closes every connection. */
  close(): Promise<void>;
}

/** Largest export accepted, in bytes: the example's exports are a few kB. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

// The parts of the OTLP JSON encoding (ExportTraceServiceRequest) the tree needs.
// 64-bit integers may arrive as JSON numbers or strings.
const Int64 = v.union([v.string(), v.number()]);
const AnyValue = v.object({
  stringValue: v.optional(v.string()),
  boolValue: v.optional(v.boolean()),
  intValue: v.optional(Int64),
  doubleValue: v.optional(v.number()),
});
const KeyValues = v.optional(v.array(v.object({ key: v.string(), value: v.optional(AnyValue) })), []);
const ExportRequest = v.object({
  resourceSpans: v.optional(
    v.array(
      v.object({
        resource: v.optional(v.object({ attributes: KeyValues })),
        scopeSpans: v.optional(
          v.array(
            v.object({
              spans: v.optional(
                v.array(
                  v.object({
                    traceId: v.pipe(v.string(), v.regex(/^[0-9a-f]{32}$/)),
                    spanId: v.pipe(v.string(), v.regex(/^[0-9a-f]{16}$/)),
                    parentSpanId: v.optional(v.string()),
                    name: v.string(),
                    startTimeUnixNano: Int64,
                    attributes: KeyValues,
                  }),
                ),
                [],
              ),
            }),
          ),
          [],
        ),
      }),
    ),
    [],
  ),
});

/** Starts a collector on a free port of 127.0.0.1. */
export async function startCollector(): Promise<Collector> {
  const spans: CollectedSpan[] = [];
  const server = createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/traces') {
      res.writeHead(404).end();
      return;
    }
    readBody(req).then(
      (body) => {
        const parsed = v.safeParse(ExportRequest, parseJson(body));
        if (!parsed.success) {
          res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ message: v.summarize(parsed.issues) }));
          return;
        }
        spans.push(...spansOf(parsed.output));
        // An ExportTraceServiceResponse with nothing rejected.
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      },
      (error: unknown) => res.writeHead(400).end(String(error)),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    spans,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // The exporters keep their connections alive; they would hold close() open.
        server.closeAllConnections();
      }),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > MAX_BODY_BYTES) req.destroy(new Error(`export over ${MAX_BODY_BYTES} bytes`));
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** The JSON value of a text, or `undefined` when it is not JSON (the schema then refuses it). */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function spansOf(request: v.InferOutput<typeof ExportRequest>): CollectedSpan[] {
  return request.resourceSpans.flatMap((resourceSpans) => {
    const service = String(attributesOf(resourceSpans.resource?.attributes ?? [])['service.name'] ?? 'unknown');
    return resourceSpans.scopeSpans.flatMap(({ spans }) =>
      spans.map((span) => ({
        service,
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId === undefined || span.parentSpanId === '' ? undefined : span.parentSpanId,
        name: span.name,
        startTimeUnixNano: BigInt(span.startTimeUnixNano),
        attributes: attributesOf(span.attributes),
      })),
    );
  });
}

function attributesOf(list: v.InferOutput<typeof KeyValues>): Record<string, string | number | boolean> {
  const attributes: Record<string, string | number | boolean> = {};
  for (const { key, value } of list) {
    const scalar = value?.stringValue ?? value?.boolValue ?? value?.doubleValue ?? (value?.intValue === undefined ? undefined : Number(value.intValue));
    if (scalar !== undefined) attributes[key] = scalar;
  }
  return attributes;
}

/**
 * The spans as text, one tree per trace: a header line with the trace id and how many
 * spans and processes it has, then one line per span: the process (`service.name`), the
 * span's place in the tree and its name, and, for a tool call, its outcome
 * (`toolrun.tool.outcome`). Children are ordered by name, then start time, so the same run
 * always draws the same tree.
 */
export function traceTree(spans: readonly CollectedSpan[]): string[] {
  const width = Math.max(...spans.map((span) => span.service.length));
  const ids = new Set(spans.map((span) => span.spanId));
  const children = new Map<string | undefined, CollectedSpan[]>();
  for (const span of spans) {
    // A span whose parent was not collected is drawn as a root.
    const parent = span.parentSpanId !== undefined && ids.has(span.parentSpanId) ? span.parentSpanId : undefined;
    children.set(parent, [...(children.get(parent) ?? []), span]);
  }
  const ordered = (list: readonly CollectedSpan[] = []) =>
    [...list].sort((a, b) => (a.name === b.name ? Number(a.startTimeUnixNano - b.startTimeUnixNano) : a.name < b.name ? -1 : 1));
  const lines: string[] = [];
  const draw = (span: CollectedSpan, lead: string, branch: string): void => {
    const outcome = span.attributes['toolrun.tool.outcome'];
    lines.push(`${span.service.padEnd(width)}  ${lead}${branch}${span.name}${outcome === undefined ? '' : ` (${outcome})`}`);
    const below = ordered(children.get(span.spanId));
    const inner = lead + (branch === '' ? '' : branch === '├─ ' ? '│  ' : '   ');
    below.forEach((child, i) => draw(child, inner, i === below.length - 1 ? '└─ ' : '├─ '));
  };
  for (const root of ordered(children.get(undefined))) {
    const inTrace = spans.filter((span) => span.traceId === root.traceId);
    const processes = new Set(inTrace.map((span) => span.service)).size;
    lines.push(`trace ${root.traceId}: ${plural(inTrace.length, 'span')} from ${plural(processes, 'process', 'processes')}`);
    draw(root, '', '');
  }
  return lines;
}

function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

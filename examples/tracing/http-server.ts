/**
 * The example's Streamable HTTP MCP server: one tool, `checksum`, served on a free port of
 * 127.0.0.1. It prints its endpoint's URL as the first line of its stdout, for the agent.
 * Its spans go to the collector named by `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`; the tool
 * makes a span of its own (`sha256`), which nests under the call's span.
 *
 * It stops when its stdin ends (the agent closes it) or on SIGTERM: it ends the running
 * calls and the sessions, closes its port, sends its last spans, and exits.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { trace } from '@opentelemetry/api';
import * as v from 'valibot';
import { defineTool } from '../../lib/index.ts';
import { serveMcp } from '../../lib/mcp/index.ts';
import { openTelemetry } from '../../lib/otel/index.ts';
import { startTelemetry } from './telemetry.ts';

const telemetry = startTelemetry('http-server');
const tracer = trace.getTracer('tracing-example');

const checksum = defineTool({
  name: 'checksum',
  description: 'The SHA-256 checksum of a text (UTF-8), in hex.',
  input: v.object({ text: v.pipe(v.string(), v.maxLength(100_000)) }),
  execute: ({ text }) =>
    // The call's span is the active one while the tool runs: this span is its child.
    tracer.startActiveSpan('sha256', (span) => {
      try {
        const bytes = Buffer.from(text, 'utf8');
        span.setAttribute('checksum.bytes', bytes.length);
        return createHash('sha256').update(bytes).digest('hex');
      } finally {
        span.end();
      }
    }),
});

const served = await serveMcp([checksum], { http: { port: 0 }, tracing: openTelemetry() });
console.log(served.url!.href);

let stopping: Promise<void> | undefined;
const stop = () =>
  (stopping ??= (async () => {
    await served.close();
    await telemetry.shutdown();
  })());
process.stdin.once('end', stop).resume();
process.once('SIGTERM', stop);

/**
 * The example's stdio MCP server: one tool, `read_file` (toolrun's own, confined to this
 * folder), served over this process's stdin and stdout. The agent starts it as a child
 * process; its spans go to the collector named by `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`.
 *
 * It stops when its stdin ends (the client closed the connection) or on SIGTERM: it ends
 * the running calls, sends its last spans, and exits.
 *
 * @module
 */
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveMcp } from '../../lib/mcp/index.ts';
import { openTelemetry } from '../../lib/otel/index.ts';
import { readFileTool } from '../../lib/tools/index.ts';
import { startTelemetry } from './telemetry.ts';

const telemetry = startTelemetry('stdio-server');
const served = await serveMcp([readFileTool({ root: dirname(fileURLToPath(import.meta.url)) })], {
  // Each call's span continues the trace of the request's `_meta.traceparent`.
  tracing: openTelemetry(),
});

let stopping: Promise<void> | undefined;
const stop = () =>
  (stopping ??= (async () => {
    await served.close();
    await telemetry.shutdown();
  })());
process.stdin.once('end', stop);
process.once('SIGTERM', stop);

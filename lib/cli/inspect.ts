/**
 * `toolrun inspect <log>` and the `--inspect` flag of the demo and of `agent`: the timeline
 * of a batch in the browser (lib/inspect). The page is served on 127.0.0.1 with a random
 * token in its URL, which is printed; a browser is opened only with `--open`. The server
 * stays up until Ctrl+C, so the page can still be looked at after the run ends.
 *
 * @module
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { EventLogError, openInspector, readEventLog, type Inspector } from '../inspect/index.ts';
import { serveTimeline } from '../inspect/server.ts';
import { CliInputError } from './errors.ts';

/** Opens `url` in the desktop's browser; a failure to start one is reported, never thrown. */
export function openBrowser(url: string, report: (line: string) => void): void {
  const command = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  try {
    const child = spawn(command, [url], { stdio: 'ignore', detached: true });
    child.on('error', (error) => report(`could not open a browser (${command}: ${error.message}); open the address above yourself`));
    child.unref();
  } catch (error) {
    report(`could not open a browser (${command}: ${(error as Error).message}); open the address above yourself`);
  }
}

/** Waits for `signal` (Ctrl+C). */
async function untilAborted(signal: AbortSignal): Promise<void> {
  if (!signal.aborted) await once(signal, 'abort');
}

/** `toolrun inspect <file>`: serves a recorded event log until Ctrl+C; exit 0. */
export async function inspectLogCommand(file: string, options: { open: boolean; signal: AbortSignal; line: (text: string) => void }): Promise<number> {
  let read;
  try {
    read = await readEventLog(file);
  } catch (error) {
    if (error instanceof EventLogError) throw new CliInputError(`inspect: ${error.message}`);
    throw error;
  }
  const server = await serveTimeline(read.timeline);
  try {
    const batches = read.timeline.batchCount;
    options.line(`inspect: ${file}, ${batches} batch${batches === 1 ? '' : 'es'}, ${read.timeline.callCount} call${read.timeline.callCount === 1 ? '' : 's'}${read.truncated ? ' (its last line is cut off: read up to it)' : ''}`);
    options.line(`the timeline is at ${server.url}  (127.0.0.1 only; Ctrl+C stops it)`);
    if (options.open) openBrowser(server.url, options.line);
    await untilAborted(options.signal);
    return 0;
  } finally {
    await server.close();
  }
}

/** For `--inspect`: the live inspector, its address printed. */
export async function liveInspector(title: string, options: { open: boolean; line: (text: string) => void }): Promise<Inspector> {
  const inspector = await openInspector({ title });
  options.line(`the timeline is at ${inspector.url}  (127.0.0.1 only)`);
  if (options.open) openBrowser(inspector.url, options.line);
  return inspector;
}

/** After a run with `--inspect`: keeps the page up until Ctrl+C, then stops it. */
export async function keepServing(inspector: Inspector, signal: AbortSignal, line: (text: string) => void): Promise<void> {
  try {
    if (!signal.aborted) {
      line(`the run is over; the timeline stays at ${inspector.url} until Ctrl+C`);
      await untilAborted(signal);
    }
  } finally {
    await inspector.close();
  }
}

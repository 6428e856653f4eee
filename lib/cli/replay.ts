/**
 * `npm start -- replay <file-or-folder>`: runs the tool calls of recorded conversations
 * through `runTools` and checks contract F4 against what the recording's framework sent.
 *
 * For each recorded assistant message with at least one tool call:
 * 1. tools are built from the recorded definitions (the recorded JSON Schema, validated by
 *    toolrun's JSON Schema validator; `{ type: 'object' }` when the recording has none);
 *    each tool body yields one progress value, waits a random 0..`delayMs` ms (so the
 *    live view shows completion order differing from call order) and returns the output
 *    recorded for that call — or throws its text when the recording marked it `is_error`;
 * 2. `runTools(calls, { tools })` runs them; every event goes to the view;
 * 3. the results, converted with `toAnthropic` / `toOpenAIChat` / `toOpenAIResponses`, are
 *    compared with the recorded follow-up (see `recordings/compare.ts`), and the message is
 *    `matched`, `explained` (the recording itself is irregular: the reason is given) or
 *    `mismatched`.
 *
 * With `stream: true` (`replay --stream`), each recording that kept its response as a
 * stream is replayed *as a stream* instead (contract S4): the recorded events go to the
 * stream adapter (`fromAnthropicStream`, `fromOpenAIChatStream`, `fromOpenAIResponsesStream`)
 * one every `eventDelayMs` ms — recordings keep no timestamps, so the pace is fixed — and
 * `runTools` starts each call as soon as the adapter yields it, while the rest of the
 * message is still arriving. The view gets one line per call the stream completes and one
 * for the message's end (`⋯ 1.20 s, event 24/37: …`). The check is the same F4 check, plus:
 * the streamed calls must equal the assembled message's calls.
 *
 * Formats read: see {@link KNOWN_FORMATS}. The corpus is described in
 * `../shared/corpus/SOURCES.md`.
 *
 * @module
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import type { CallOutcome } from '../core/tool/tool.ts';
import type { ToolBatch, ToolEvent } from '../core/run/events.ts';
import { fromAnthropicStream } from '../formats/anthropic-stream.ts';
import { fromOpenAIChatStream } from '../formats/openai-chat-stream.ts';
import { fromOpenAIResponsesStream } from '../formats/openai-responses-stream.ts';
import type { ToolCallStreamEnd } from '../formats/stream-calls.ts';
import { runTools } from '../core/run/run-tools.ts';
import { defineForeignTool } from '../core/schema/define-tool.ts';
import type { Tool, ToolCall, ToolResultMessage } from '../core/tool/tool.ts';
import { judge, pairRecorded, readWire, type Verdict, type WireEntry } from './recordings/compare.ts';
import { KNOWN_FORMATS, listRecordingFiles, loadRecording, statOrUndefined, unknownFormatMessage } from './recordings/load.ts';
import { ANY_OBJECT_SCHEMA, type LoadedRecording, type RecordedMessage, type RecordedStream, type RecordedTool } from './recordings/types.ts';
import { CliInputError } from './errors.ts';
import { count } from './text.ts';
import type { RunView } from './view/index.ts';

{ KNOWN_FORMATS };

/** Options of {@link replay}. */
export interface ReplayOptions {
  /** Draws each message's run (`begin`, every event, `end`) and the lines outside runs. */
  view: RunView;
  /**
   * Longest fake latency of one replayed call, in ms: each tool body waits a random
   * 0..`delayMs` ms before returning its recorded output. `0` runs without timers (specs).
   * @default 40
   */
  delayMs?: number;
  /** Where lines outside runs go (one header per file, skipped files). @default view.line */
  out?: (line: string) => void;
  /** Stops the replay: running calls are aborted, no further message starts. */
  signal?: AbortSignal;
  /**
   * Replay the recorded *streams* (see the module comment): only messages whose response
   * was recorded as a stream are replayed; files without one are listed in `skipped`.
   * @default false
   */
  stream?: boolean;
  /**
   * With `stream`: the time between two recorded events, in ms (recordings keep no
   * timestamps). `0` feeds them without timers (specs).
   * @default 50
   */
  eventDelayMs?: number;
}

/** How one recorded message came out. */
interface ReplayMessageResult {
  /** Where in the file, e.g. "interaction 0", "entry parallel_3". */
  label: string;
  calls: number;
  /**
   * The F4 verdict; `interrupted` when Ctrl+C (the replay's `signal`) aborted this message's
   * run: an aborted run is not compared with the recording, and is not a mismatch.
   */
  status: Verdict['status'] | 'interrupted';
  /** Why it is `explained`, `mismatched` or `interrupted` (empty for `matched`). */
  reasons: string[];
}

/** One row of the report: a recording file. */
export interface ReplayFileRow {
  /** The file, relative to the replay target (its name when the target is a file). */
  file: string;
  /** The detected format, e.g. "Anthropic Messages cassette". */
  format: string;
  /** Assistant messages with at least one tool call that were replayed. */
  messages: number;
  /** Tool calls in those messages. */
  calls: number;
  matched: number;
  explained: number;
  mismatched: number;
  /** Messages whose run Ctrl+C aborted (0 or 1: the replay stops there). */
  interrupted: number;
  /** Distinct reasons with their counts, e.g. `"explained ×2: no follow-up recorded …"`. */
  reasons: string[];
  /** Per message. */
  results: ReplayMessageResult[];
  /** Files read with this one (a BFCL question file's answers). */
  companions: string[];
}

/** The report of one replay. */
export interface ReplayReport {
  /** The target as given. */
  target: string;
  rows: ReplayFileRow[];
  /** Files under a folder target that are not recordings (unknown format), with the reason. */
  skipped: Array<{ file: string; reason: string }>;
  totals: { files: number; messages: number; calls: number; matched: number; explained: number; mismatched: number; interrupted: number };
  /** 0, or 1 when any message is `mismatched`. */
  exitCode: 0 | 1;
  /** True when the replay stopped early on `signal`. */
  aborted: boolean;
}

/** Default of {@link ReplayOptions.delayMs}, in ms. */
const DEFAULT_DELAY_MS = 40;

/** Default of {@link ReplayOptions.eventDelayMs}, in ms: about the pace of a model streaming a tool call. */
const DEFAULT_EVENT_DELAY_MS = 50;

/**
 * Replays a recording file, or every recording under a folder (recursively, sorted by
 * path; BFCL question files are paired with their `possible_answer_*` files by name; files
 * of unknown format under a folder are listed in `skipped`).
 *
 * A relative `target` is resolved from the working directory; `examples/…` that does not
 * exist there is looked up in the installed package (`toolrun replay examples/recordings`
 * works from any folder), and `corpus` or `corpus/…` in `../shared/corpus` next to the
 * package's folder (a development checkout).
 *
 * @throws CliInputError (one line naming the file) for a missing path, a JSON syntax error
 *   (with line and column), a file of unknown format (listing the known formats), a BFCL
 *   file without its companion, a folder without any recording, or — with `stream` — a
 *   file or folder without any recorded stream.
 *
 * @example
 * ```ts
 * const report = await replay('../shared/corpus', { view: createRunView({ stream: process.stdout }) });
 * console.log(formatReportTable(report));
 * process.exitCode = report.exitCode;
 * ```
 */
export async function replay(target: string, options: ReplayOptions): Promise<ReplayReport> {
  const { view } = options;
  const out = options.out ?? ((line: string) => view.line(line));
  const delayMs = options.delayMs ?? DEFAULT_DELAY_MS;
  if (!(delayMs >= 0 && Number.isFinite(delayMs))) throw new CliInputError(`--delay must be a number of ms ≥ 0, received ${String(delayMs)}`);
  const eventDelayMs = options.eventDelayMs ?? DEFAULT_EVENT_DELAY_MS;
  if (!(eventDelayMs >= 0 && Number.isFinite(eventDelayMs))) {
    throw new CliInputError(`--event-delay must be a number of ms ≥ 0, received ${String(eventDelayMs)}`);
  }
  const path = resolveTarget(target);
  const info = await statOrUndefined(path);
  if (info === undefined) throw new CliInputError(`${target}: no such file or folder`);

  const report: ReplayReport = {
    target,
    rows: [],
    skipped: [],
    totals: { files: 0, messages: 0, calls: 0, matched: 0, explained: 0, mismatched: 0, interrupted: 0 },
    exitCode: 0,
    aborted: false,
  };
  // Errors name a file as the user wrote it; rows name it relative to the folder (or by its name).
  const files = info.isDirectory() ? await listRecordingFiles(path) : [{ path, shown: target }];
  const loaded: Array<{ shown: string; recording: LoadedRecording }> = [];
  for (const file of files) {
    const outcome = await loadRecording(file.path, file.shown);
    if (outcome.ok) loaded.push({ shown: info.isDirectory() ? file.shown : basename(path), recording: outcome.recording });
    else if (info.isDirectory()) report.skipped.push({ file: file.shown, reason: `not a recording: ${outcome.reason}` });
    else throw new CliInputError(unknownFormatMessage(file.shown, outcome.reason));
  }
  if (loaded.length === 0) {
    throw new CliInputError(`${target}: no recordings found (${files.length} .json/.jsonl files; known formats: ${KNOWN_FORMATS.join('; ')})`);
  }
  if (options.stream === true) keepStreamed(target, loaded, info.isDirectory(), report);

  for (const { shown, recording } of loaded) {
    if (isAborted(options.signal)) {
      report.aborted = true;
      break;
    }
    const stream = options.stream === true ? { eventDelayMs } : undefined;
    const row = await replayFile(shown, recording, { view, out, delayMs, signal: options.signal, stream });
    report.rows.push(row);
    report.totals.files++;
    report.totals.messages += row.messages;
    report.totals.calls += row.calls;
    report.totals.matched += row.matched;
    report.totals.explained += row.explained;
    report.totals.mismatched += row.mismatched;
    report.totals.interrupted += row.interrupted;
    if (isAborted(options.signal)) report.aborted = true;
  }
  report.exitCode = report.totals.mismatched > 0 ? 1 : 0;
  return report;
}

// A function, not an inline check: TypeScript would narrow `aborted` across the awaits.
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

function resolveTarget(target: string): string {
  const path = resolve(target);
  if (existsSync(path) || isAbsolute(target)) return path;
  // `toolrun replay examples/recordings` from any folder: the recordings the package ships.
  if (target === 'examples' || target.startsWith('examples/')) {
    const root = packageRoot();
    if (root !== undefined && existsSync(join(root, target))) return join(root, target);
  }
  if (target === 'corpus' || target.startsWith('corpus/')) {
    const root = packageRoot();
    const shared = root === undefined ? undefined : join(root, '..', 'shared', target);
    if (shared !== undefined && existsSync(shared)) return shared;
  }
  return path;
}

/**
 * The folder of this package (the nearest folder above this module whose package.json is
 * named `toolrun`), wherever it is installed or built to; `undefined` if none is found.
 */
function packageRoot(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let up = 0; up < 6; up++) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown };
      if (manifest.name === 'toolrun') return dir;
    } catch {
      // No package.json here (or not JSON): look one folder up.
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return undefined;
}

interface FileContext {
  view: RunView;
  out: (line: string) => void;
  delayMs: number;
  signal: AbortSignal | undefined;
  /** Set when the recorded streams are replayed (`--stream`). */
  stream: { eventDelayMs: number } | undefined;
}

/**
 * `--stream`: keeps only the messages whose response was recorded as a stream; a file with
 * none is skipped (in a folder) or refused (as the target).
 */
function keepStreamed(target: string, loaded: Array<{ shown: string; recording: LoadedRecording }>, folder: boolean, report: ReplayReport): void {
  for (let i = loaded.length - 1; i >= 0; i--) {
    const { shown, recording } = loaded[i]!;
    const streamed = recording.messages.filter((message) => message.stream !== undefined);
    if (streamed.length > 0) {
      loaded[i] = { shown, recording: { ...recording, messages: streamed } };
      continue;
    }
    if (!folder) throw new CliInputError(`${target}: this recording kept no streamed response (--stream replays recorded streams; drop --stream to replay it)`);
    loaded.splice(i, 1);
    report.skipped.unshift({ file: shown, reason: 'no recorded stream (replayed without --stream)' });
  }
  if (loaded.length === 0) throw new CliInputError(`${target}: no recorded streams found (--stream replays streamed responses; drop it to replay the others)`);
}

async function replayFile(shown: string, recording: LoadedRecording, context: FileContext): Promise<ReplayFileRow> {
  const row: ReplayFileRow = {
    file: shown,
    format: recording.format,
    messages: 0,
    calls: 0,
    matched: 0,
    explained: 0,
    mismatched: 0,
    interrupted: 0,
    reasons: [],
    results: [],
    companions: recording.companions,
  };
  const companions = recording.companions.length > 0 ? ` with ${recording.companions.join(', ')}` : '';
  context.out(`── ${shown}${companions} (${recording.format}): ${count(recording.messages.length, 'message')} with tool calls`);
  const counts = new Map<string, number>();
  for (const warning of recording.warnings ?? []) counts.set(`warning: ${warning}`, 1);
  for (const message of recording.messages) {
    if (context.signal?.aborted === true) break;
    const result = await replayMessage(`${shown} · ${message.label}`, message, context);
    row.results.push(result);
    row.messages++;
    row.calls += result.calls;
    row[result.status]++;
    for (const reason of result.reasons) {
      const key = `${result.status}: ${reason}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  }
  row.reasons = [...counts.entries()].map(([key, n]) => (n === 1 ? key : key.replace(/^(\w+):/, `$1 ×${n}:`)));
  return row;
}

/** Runs one recorded message and judges it. */
async function replayMessage(title: string, recorded: RecordedMessage, context: FileContext): Promise<ReplayMessageResult> {
  const { calls } = recorded;
  const entries = recordedEntries(recorded);
  const pending = new Map<string, number[]>();
  const tools = buildTools(recorded, entries, pending, context.delayMs);
  const outcomes: Array<CallOutcome | undefined> = calls.map(() => undefined);
  const results: ToolResultMessage[] = [];
  const { view } = context;
  const stream = context.stream === undefined ? undefined : recorded.stream;
  const streamed: ToolCall[] = [];
  const source = stream === undefined ? calls : pacedCalls(stream, context.stream!.eventDelayMs, context.signal, view, streamed);
  // A streamed run starts with no calls: each appears when the stream completes it.
  if (stream === undefined) view.begin(title, calls);
  else view.begin(`${title} · streamed, ${stream.events.length} events ${context.stream!.eventDelayMs} ms apart`, []);
  let verdict: Verdict | { status: 'interrupted'; reasons: string[] };
  try {
    const run = runTools(source, {
      tools,
      ...(context.signal === undefined ? {} : { signal: context.signal }),
      // Runs serially in call order right before a call may execute (P1): the queue tells
      // each tool body which call it is running, even when ids repeat or are empty.
      beforeToolCall: ({ toolCall, index }) => {
        const queue = pending.get(toolCall.id) ?? [];
        queue.push(index);
        pending.set(toolCall.id, queue);
      },
    });
    let batch: ToolBatch | undefined;
    for (;;) {
      const step = await run.next();
      if (step.done === true) {
        batch = step.value;
        break;
      }
      const event: ToolEvent = step.value;
      view.event(event);
      if (event.type === 'tool_execution_end') outcomes[event.index] = event.outcome;
      else if (event.type === 'tool_result') results.push(event.message);
    }
    verdict = judge(recorded, { messages: batch.messages, outcomes });
    if (batch.messages.length !== results.length || batch.messages.some((m, i) => m !== results[i])) {
      verdict = {
        status: 'mismatched',
        reasons: ['runtime: the returned batch differs from the tool_result events (contract O6)', ...verdict.reasons],
      };
    }
    if (stream !== undefined && !sameCalls(streamed, calls)) {
      verdict = { status: 'mismatched', reasons: ['stream: the streamed calls differ from the assembled message\'s calls', ...verdict.reasons] };
    }
    // An aborted run answers its calls with `interrupted` / `not_run` results, which no
    // recording holds: comparing them would report a contract mismatch that is not one.
    if (batch.aborted) verdict = { status: 'interrupted', reasons: ['Ctrl+C aborted this message\'s run; its results were not compared'] };
  } catch (error) {
    verdict = { status: 'mismatched', reasons: [`runtime: runTools threw: ${error instanceof Error ? error.message : String(error)}`] };
  }
  view.end(verdict.status === 'matched' ? 'matched' : `${verdict.status}: ${verdict.reasons.join('; ')}`);
  return { label: recorded.label, calls: calls.length, status: verdict.status, reasons: verdict.reasons };
}

const STREAM_ADAPTERS = {
  anthropic: fromAnthropicStream,
  'openai-chat': fromOpenAIChatStream,
  'openai-responses': fromOpenAIResponsesStream,
} as const;

/**
 * The calls of a recorded stream, fed to its adapter one event every `delayMs` ms; tells
 * the view when each call is complete and when the message ends, and keeps the calls in
 * `seen`.
 */
async function* pacedCalls(
  stream: RecordedStream,
  delayMs: number,
  signal: AbortSignal | undefined,
  view: RunView,
  seen: ToolCall[],
): AsyncGenerator<ToolCall, void, undefined> {
  const total = stream.events.length;
  const began = performance.now();
  let read = 0;
  const at = (): string => `  ⋯ ${((performance.now() - began) / 1000).toFixed(2)} s, event ${read}/${total}:`;
  async function* paced(): AsyncGenerator<unknown, void, undefined> {
    for (const event of stream.events) {
      if (delayMs > 0) await sleep(delayMs, undefined, signal === undefined ? undefined : { signal });
      read++;
      yield event;
    }
  }
  // Why the end line waits: the adapter reports the message's end while it reads the last
  // event, before it yields the calls that event completed; printed at once, "the message
  // ended" would come before their "complete" lines. It is printed once the adapter is done.
  let ended: string | undefined;
  const onMessageEnd = (end: ToolCallStreamEnd): void => {
    const reason = end.stopReason === null ? '' : `, ${stream.format === 'anthropic' ? 'stop_reason' : stream.format === 'openai-chat' ? 'finish_reason' : 'status'} "${end.stopReason}"`;
    ended = `${at()} the message ended (${end.status}${reason}): ${count(end.calls, 'call')}${end.incompleteCalls > 0 ? `, ${end.incompleteCalls} cut off` : ''}`;
  };
  try {
    for await (const call of STREAM_ADAPTERS[stream.format](paced(), { onMessageEnd })) {
      seen.push(call);
      const still = read < total ? ', the message is still streaming' : '';
      view.line(`${at()} call #${seen.length} ${call.id || '""'} ${call.name} complete${still}`);
      yield call;
    }
  } finally {
    if (ended !== undefined) view.line(ended);
  }
}

/** Same ids, names and argument values (a JSON text and the object it encodes are the same). */
function sameCalls(a: readonly ToolCall[], b: readonly ToolCall[]): boolean {
  const value = (call: ToolCall): unknown => {
    if (typeof call.arguments !== 'string') return call.arguments;
    if (call.arguments.trim() === '') return {};
    try {
      return JSON.parse(call.arguments);
    } catch {
      return call.arguments;
    }
  };
  return a.length === b.length && a.every((call, i) => call.id === b[i]!.id && call.name === b[i]!.name && call.incomplete === undefined && isDeepStrictEqual(value(call), value(b[i]!)));
}

/** The recorded result of each call (by call index), paired as `judge` pairs them. */
function recordedEntries(recorded: RecordedMessage): Array<WireEntry | undefined> {
  if ('none' in recorded.followUp) return recorded.calls.map(() => undefined);
  const reading = readWire(recorded.followUp.format, recorded.followUp.wire);
  return pairRecorded(recorded.followUp, reading.entries, recorded.calls.length).map((j) => (j >= 0 ? reading.entries[j] : undefined));
}

/**
 * One tool per recorded definition (first of a repeated name wins), or, when the recording
 * has none, one permissive tool per called name. Each body returns the recorded output of
 * the call it runs (see the module comment).
 */
function buildTools(
  recorded: RecordedMessage,
  entries: ReadonlyArray<WireEntry | undefined>,
  pending: Map<string, number[]>,
  delayMs: number,
): Tool[] {
  const definitions: RecordedTool[] = recorded.tools ?? [...new Set(recorded.calls.map((call) => call.name))].map((name) => ({ name, schema: ANY_OBJECT_SCHEMA }));
  const tools: Tool[] = [];
  const names = new Set<string>();
  for (const definition of definitions) {
    if (definition.name === '' || names.has(definition.name)) continue;
    names.add(definition.name);
    tools.push(
      defineForeignTool({
        name: definition.name,
        input: definition.schema,
        async *execute(_input, { toolCallId, toolName, signal }) {
          const index = pending.get(toolCallId)?.shift();
          const entry = index === undefined ? undefined : entries[index];
          const wait = delayMs > 0 ? Math.round(Math.random() * delayMs) : 0;
          yield wait > 0 ? `replaying the recorded result of ${toolName} in ${wait} ms` : `replaying the recorded result of ${toolName}`;
          if (wait > 0) await sleep(wait, undefined, { signal });
          if (entry === undefined) return `(replay: no result was recorded for this call of ${toolName})`;
          if (entry.isError === true) throw new Error(entry.text);
          return { content: entry.content };
        },
      }),
    );
  }
  return tools;
}

/**
 * Renders the report as a table: one row per file (messages, calls, matched, explained,
 * mismatched), each row's reasons indented under it, then a totals line and the skipped
 * files.
 *
 * @example
 * ```text
 * file                                   format                        msgs calls matched explained mismatched
 * anthropic/pydantic-ai__…parallel.json  Anthropic Messages cassette      1     4       1         0          0
 * openai-chat/crewai__…multi_turn.json   OpenAI Chat Completions …        4     9       2         2          0
 *     explained ×2: the framework rewrote the assistant message in history to hold 1 of its 4 calls …
 * total: 20 files, 512 messages, 1320 calls: 30 matched, 482 explained, 0 mismatched
 * ```
 */
export function formatReportTable(report: ReplayReport): string {
  const header = ['file', 'format', 'msgs', 'calls', 'matched', 'explained', 'mismatched'];
  const cells = report.rows.map((row) => [
    row.file,
    row.format,
    String(row.messages),
    String(row.calls),
    String(row.matched),
    String(row.explained),
    String(row.mismatched),
  ]);
  const widths = header.map((title, c) => Math.max(title.length, ...cells.map((cell) => (cell[c] ?? '').length)));
  const line = (cell: string[]): string =>
    cell.map((text, c) => (c < 2 ? text.padEnd(widths[c] ?? 0) : text.padStart(widths[c] ?? 0))).join('  ').trimEnd();
  const lines = [line(header)];
  report.rows.forEach((row, r) => {
    lines.push(line(cells[r] ?? []));
    for (const reason of row.reasons) lines.push(`    ${reason}`);
  });
  const t = report.totals;
  lines.push(
    `total: ${count(t.files, 'file')}, ${count(t.messages, 'message')}, ${count(t.calls, 'call')}: ` +
      `${t.matched} matched, ${t.explained} explained, ${t.mismatched} mismatched` +
      `${t.interrupted > 0 ? `, ${t.interrupted} interrupted` : ''}${report.aborted ? ' (stopped early by Ctrl+C)' : ''}`,
  );
  for (const skipped of report.skipped) lines.push(`skipped ${skipped.file}: ${skipped.reason}`);
  return lines.join('\n');
}

/**
 * Running untrusted regular expressions where they cannot freeze the event loop: in a
 * `worker_thread` that is terminated when the deadline passes or the signal aborts.
 *
 * JavaScript cannot interrupt a running `RegExp`, and a pattern such as `^(a+)+$` on
 * `"aaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"` backtracks for tens of seconds. A linear-time engine
 * cannot run every JavaScript pattern (lookaround, backreferences), which `grep` accepts; the
 * core's JSON Schema `pattern`s, which need not, do run on one (`re2js`: docs/adr/0008-json-schema-validation.md). Workers are pooled:
 * an idle one is kept (unref'd, so it never keeps the process alive) and reused by the next
 * request; a worker that ran out of time is terminated and replaced.
 *
 * @module
 */
import { Worker } from 'node:worker_threads';

/** Thrown (rejected) when matching did not finish within its time limit. */
export class RegExpTimeoutError extends Error {
  /** The limit that ran out, in ms. */
  readonly timeoutMs: number;
  constructor(source: string, timeoutMs: number) {
    super(
      `the regular expression /${source}/ did not finish within ${timeoutMs} ms and was stopped; it probably ` +
        'backtracks catastrophically (nested quantifiers such as (a+)+ or (a|a)*). Simplify it.',
    );
    this.name = 'RegExpTimeoutError';
    this.timeoutMs = timeoutMs;
  }
}

/** Options of {@link safeRegExpTest}. */
export interface SafeRegExpOptions {
  /**
   * The most ms the matching may take; when it runs out the worker is terminated and the
   * call rejects with {@link RegExpTimeoutError}.
   * @default 1000
   */
  timeoutMs?: number;
  /** Aborting it terminates the worker; the call rejects with the signal's reason. */
  signal?: AbortSignal;
}

/**
 * Tests `regex` against each input in a worker thread, so that a catastrophic pattern costs
 * a worker, not the event loop (terminating a worker interrupts a running `RegExp` within
 * milliseconds). `lastIndex` is reset before each test (the `g` and `y` flags
 * have no carry-over between inputs).
 *
 * Meant for JavaScript patterns that come from outside, such as a model's `grep` pattern
 * (toolrun's own JSON Schema validation does not use it: its `pattern`s run on `re2js`). Costs a message round trip to a pooled worker (0.1–0.3 ms
 * when one is idle; starting one takes 30–45 ms).
 *
 * @returns one boolean per input, in order.
 * @throws RegExpTimeoutError when `timeoutMs` runs out; the signal's reason when it aborts.
 * @example
 * ```ts
 * const [ok] = await safeRegExpTest(new RegExp(schema.pattern, 'u'), [value], { timeoutMs: 100 });
 * ```
 */
export async function safeRegExpTest(regex: RegExp, inputs: readonly string[], options: SafeRegExpOptions = {}): Promise<boolean[]> {
  const reply = await runInWorker(
    { kind: 'test', source: regex.source, flags: regex.flags, inputs: [...inputs] },
    options.timeoutMs ?? 1000,
    options.signal,
    regex.source,
  );
  return reply.results as boolean[];
}

/** One matching line found by {@link matchLines}. */
export interface LineMatch {
  /** 1-based line number. */
  line: number;
  /** The line's text (a trailing `\r` dropped), cut to `maxLineChars`. */
  text: string;
  /** The length of the whole line, in UTF-16 code units. */
  length: number;
}

/**
 * Splits each of `files` (UTF-8 bytes) on `\n`, drops a trailing `\r` from each line, and
 * finds the lines `regex` matches, at most `maxMatches` over all files, in a worker thread
 * (see {@link safeRegExpTest}). The files' memory is transferred to the worker, so the
 * buffers are unusable afterwards. One call for many small files costs one round trip.
 *
 * @returns `perFile[i]`: the matches in `files[i]`, for the files searched; when `more` is
 *   true (a match beyond `maxMatches` exists), the search stopped in the last of them and the
 *   files after it were not searched.
 * @throws RegExpTimeoutError when `timeoutMs` runs out; the signal's reason when it aborts.
 * @example
 * ```ts
 * const { perFile, more } = await matchLines(/TODO/u, [await readFile('a.ts')], { maxMatches: 100, maxLineChars: 200, timeoutMs: 1000 });
 * ```
 */
export async function matchLines(
  regex: RegExp,
  files: readonly Uint8Array[],
  options: { maxMatches: number; maxLineChars: number; timeoutMs: number; signal?: AbortSignal },
): Promise<{ perFile: LineMatch[][]; more: boolean }> {
  // Transfer exactly sized buffers (a pooled Buffer shares its memory, so it is copied).
  const owned = files.map((bytes) => (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice()));
  const transfer = [...new Set(owned.map((bytes) => bytes.buffer as ArrayBuffer))];
  const reply = await runInWorker(
    {
      kind: 'lines',
      source: regex.source,
      flags: regex.flags,
      files: owned,
      maxMatches: options.maxMatches,
      maxLineChars: options.maxLineChars,
    },
    options.timeoutMs,
    options.signal,
    regex.source,
    transfer,
  );
  return { perFile: reply.perFile as LineMatch[][], more: reply.more as boolean };
}

/** The worker's code: compiles each pattern once and answers one request at a time. */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const compiled = new Map();
function compile(source, flags) {
  const key = flags + '/' + source;
  let regex = compiled.get(key);
  if (regex === undefined) {
    if (compiled.size > 64) compiled.clear();
    regex = new RegExp(source, flags);
    compiled.set(key, regex);
  }
  return regex;
}
function test(regex, text) {
  regex.lastIndex = 0;
  return regex.test(text);
}
parentPort.on('message', (request) => {
  try {
    const regex = compile(request.source, request.flags);
    if (request.kind === 'test') {
      parentPort.postMessage({ ok: true, results: request.inputs.map((input) => test(regex, input)) });
      return;
    }
    const decoder = new TextDecoder();
    const perFile = [];
    let total = 0;
    let more = false;
    for (const bytes of request.files) {
      const text = decoder.decode(bytes);
      const matches = [];
      perFile.push(matches);
      let start = 0;
      let line = 0;
      while (start <= text.length) {
        let end = text.indexOf('\\n', start);
        const last = end === -1;
        if (last) end = text.length;
        if (last && start === end) break;
        line++;
        let body = text.slice(start, end);
        if (body.endsWith('\\r')) body = body.slice(0, -1);
        if (test(regex, body)) {
          if (total >= request.maxMatches) { more = true; break; }
          total++;
          matches.push({ line, text: body.slice(0, request.maxLineChars), length: body.length });
        }
        start = end + 1;
      }
      if (more) break;
    }
    parentPort.postMessage({ ok: true, perFile, more });
  } catch (error) {
    parentPort.postMessage({ ok: false, message: String(error && error.message || error) });
  }
});
`;

/** Idle workers kept for reuse. */
const idle: Worker[] = [];
const MAX_IDLE = 2;

function takeWorker(): Worker {
  const worker = idle.pop() ?? new Worker(WORKER_SOURCE, { eval: true });
  worker.removeAllListeners('exit');
  worker.ref();
  return worker;
}

function releaseWorker(worker: Worker): void {
  worker.removeAllListeners('message');
  worker.removeAllListeners('error');
  worker.removeAllListeners('exit');
  if (idle.length >= MAX_IDLE) {
    void worker.terminate();
    return;
  }
  worker.unref();
  // A worker that dies while idle (out of memory, say) leaves the pool.
  worker.once('exit', () => {
    const at = idle.indexOf(worker);
    if (at !== -1) idle.splice(at, 1);
  });
  idle.push(worker);
}

type Reply = Record<string, unknown>;

function runInWorker(
  request: Record<string, unknown>,
  timeoutMs: number,
  signal: AbortSignal | undefined,
  source: string,
  transfer: ArrayBuffer[] = [],
): Promise<Reply> {
  signal?.throwIfAborted();
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    return Promise.reject(new RangeError(`timeoutMs must be a positive number of ms, received ${timeoutMs}`));
  }
  const worker = takeWorker();
  return new Promise<Reply>((resolve, reject) => {
    let settled = false;
    const finish = (outcome: () => void, keep: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (keep) releaseWorker(worker);
      else {
        worker.removeAllListeners();
        void worker.terminate();
      }
      outcome();
    };
    const onAbort = (): void => finish(() => reject(signal?.reason), false);
    const timer = setTimeout(() => finish(() => reject(new RegExpTimeoutError(source, timeoutMs)), false), timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.on('message', (reply: Reply) => {
      if (reply.ok === true) finish(() => resolve(reply), true);
      else finish(() => reject(new Error(String(reply.message))), true);
    });
    worker.on('error', (error) => finish(() => reject(error), false));
    worker.on('exit', (code) => finish(() => reject(new Error(`the regular expression worker exited with code ${code}`)), false));
    worker.postMessage(request, transfer);
  });
}

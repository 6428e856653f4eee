/**
 * Shared bodies of the CLI specs:
 * - {@link memoryIo}: an in-process {@link MainIo} for `main(argv, io)` that keeps what the
 *   program writes and presses Ctrl+C when a given text appears (no process, no clock);
 * - {@link interruptWhen}: the real program as a child process, SIGINT once its stdout
 *   shows a given text (the few end-to-end specs).
 */
import { spawn } from 'node:child_process';
import { PassThrough, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { MainIo } from '../../lib/cli/main.ts';

/** The repository root, where `lib/cli/main.ts` is run from. */
export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** A {@link MainIo} in memory, with Ctrl+C under the spec's control. */
export interface MemoryIo extends MainIo {
  /** Everything written to stdout / stderr so far. */
  out(): string;
  err(): string;
  /** Presses Ctrl+C now (calls the program's listeners synchronously). */
  interrupt(): void;
  /**
   * Presses Ctrl+C once stdout contains `marker`, as a signal would arrive: on a later turn
   * of the event loop (`setImmediate`) after the write that showed it, never inside it.
   */
  interruptWhen(marker: string): void;
  /** Resolves once stdout contains `marker` (at once if it already does). */
  whenOutput(marker: string): Promise<void>;
  /** Codes passed to `io.exit` (a second Ctrl+C). */
  exits: number[];
  /** How many Ctrl+C listeners are subscribed now. */
  listeners(): number;
  /** Types `keys` on stdin (a terminal when `memoryIo({ keyboard: true })`). */
  type(keys: string): void;
  /** Whether stdin is in raw mode now (the approval prompt puts it there while it waits). */
  raw(): boolean;
}

/**
 * Creates a {@link MemoryIo}. With `tty`, stdout looks like a terminal of that many columns
 * (so the program draws the live view, with log-update). With `keyboard`, stdin looks like a
 * terminal too (so the program asks for approvals); without it, stdin is a pipe that never
 * sends anything — never the real process.stdin.
 */
export function memoryIo(options: { env?: NodeJS.ProcessEnv; tty?: { columns: number; rows?: number }; keyboard?: boolean } = {}): MemoryIo {
  let out = '';
  let err = '';
  const listeners = new Set<() => void>();
  const pending: string[] = [];
  const watchers: Array<{ marker: string; resolve: () => void }> = [];
  const press = (): void => {
    for (const listener of [...listeners]) listener();
  };
  const sink = (append: (text: string) => void) =>
    new Writable({
      write(chunk: Buffer | string, _encoding, callback) {
        append(chunk.toString());
        callback();
      },
    }) as unknown as NodeJS.WriteStream;
  const stdout = sink((text) => {
    out += text;
    for (let i = pending.length - 1; i >= 0; i--) {
      if (out.includes(pending[i]!)) {
        pending.splice(i, 1);
        setImmediate(press);
      }
    }
    for (let i = watchers.length - 1; i >= 0; i--) {
      if (out.includes(watchers[i]!.marker)) watchers.splice(i, 1)[0]!.resolve();
    }
  });
  if (options.tty !== undefined) Object.assign(stdout, { isTTY: true, columns: options.tty.columns, rows: options.tty.rows ?? 40 });
  const exits: number[] = [];
  let raw = false;
  const stdin = new PassThrough() as unknown as NodeJS.ReadStream;
  if (options.keyboard === true) {
    Object.assign(stdin, {
      isTTY: true,
      setRawMode: (mode: boolean) => {
        raw = mode;
        return stdin;
      },
    });
    Object.defineProperty(stdin, 'isRaw', { get: () => raw });
  }
  return {
    stdout,
    stderr: sink((text) => (err += text)),
    stdin,
    type: (keys) => (stdin as unknown as PassThrough).write(keys),
    raw: () => raw,
    env: options.env ?? {},
    onInterrupt: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    exit: (code) => exits.push(code),
    out: () => out,
    err: () => err,
    interrupt: press,
    interruptWhen: (marker) => {
      if (out.includes(marker)) setImmediate(press);
      else pending.push(marker);
    },
    whenOutput: (marker) =>
      new Promise<void>((resolve) => {
        if (out.includes(marker)) resolve();
        else watchers.push({ marker, resolve });
      }),
    exits,
    listeners: () => listeners.size,
  };
}

/** What the interrupted program left: its exit code and everything it printed. */
export interface Interrupted {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Starts `main.ts` with `args`, sends SIGINT when stdout first contains `marker`, waits for the exit. */
export async function interruptWhen(args: readonly string[], marker: string): Promise<Interrupted> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'lib/cli/main.ts', ...args], { cwd: repoRoot, env: { ...process.env, NO_COLOR: '1' } });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await new Promise<void>((resolve) => {
    // A program that ends without ever printing the marker fails the spec's assertions, not its timeout.
    child.on('exit', () => resolve());
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes(marker)) resolve();
    });
  });
  child.kill('SIGINT');
  const code = await exited;
  return { code, stdout, stderr };
}

/**
 * A Writable that keeps everything written to it; `columns` makes it look like a terminal of
 * that width, `rows` (when set) of that height (log-update reads 24 otherwise).
 */
export class FakeStream extends Writable {
  output = '';
  columns = 100;
  rows?: number;
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.output += chunk.toString();
    callback();
  }
}

/**
 * What a terminal shows after `output` was written to it: a minimal emulator of the escape
 * sequences the live view (log-update) writes — cursor up / down / to a column, erase line /
 * to its end / below, newline as carriage return + line feed (a terminal's output mode);
 * styles and private modes (`ESC[?…h`) change nothing on screen and are skipped. The live
 * view redraws only the lines that changed, so the frame on screen is only found this way.
 * Returns the screen's lines, trailing spaces trimmed.
 */
export function screen(output: string): string[] {
  const rows: string[][] = [[]];
  let row = 0;
  let col = 0;
  const line = (): string[] => (rows[row] ??= []);
  for (let i = 0; i < output.length; i++) {
    const ch = output[i]!;
    if (ch === '\x1b' && output[i + 1] === '[') {
      const match = /^\x1b\[([?\d;]*)([A-Za-z])/.exec(output.slice(i, i + 32));
      if (match === null) continue;
      i += match[0].length - 1;
      const [, params = '', command] = match;
      if (params.startsWith('?')) continue;
      const n = params === '' ? 1 : Number(params.split(';')[0]);
      switch (command) {
        case 'A':
          row = Math.max(0, row - n);
          break;
        case 'B':
          row += n;
          break;
        case 'E':
          row += n;
          col = 0;
          break;
        case 'G':
          col = n - 1;
          break;
        case 'K':
          if (params === '2') rows[row] = [];
          else line().length = Math.min(line().length, col);
          break;
        case 'J':
          line().length = Math.min(line().length, col);
          rows.length = Math.min(rows.length, row + 1);
          break;
        default:
        // Styles (m) and anything else: nothing moves on screen.
      }
      continue;
    }
    if (ch === '\n') {
      row++;
      col = 0;
      continue;
    }
    if (ch === '\r') {
      col = 0;
      continue;
    }
    const cells = line();
    while (cells.length < col) cells.push(' ');
    cells[col++] = ch;
  }
  return Array.from({ length: rows.length }, (_, i) => (rows[i] ?? []).join('').trimEnd());
}

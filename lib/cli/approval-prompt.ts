/**
 * How the program answers approval requests (contract H1–H2): from `--approve` / `--deny`,
 * or, on a terminal, by asking — one key, `y` approve, `n` deny, `l` later (the run pauses
 * and its state is saved to a file). Without a terminal and without a flag, nothing
 * answers: the batch pauses.
 *
 * The question is drawn under the live frame (`RunView.prompt`) and the call's row says it
 * waits for approval. The key is read with stdin in raw mode, so the frame is not disturbed
 * by an echo; raw mode turns Ctrl+C into a byte, which is passed on as the program's Ctrl+C.
 *
 * @module
 */
import type { ToolApprovalHandler, ToolApprovalRequest, ToolApprovalResponse } from '../core/approval/approval.ts';
import { argsSummary, oneLine, truncate } from './text.ts';
import type { RunView } from './view/index.ts';

/** A decision given on the command line for every request. */
export type ApprovalFlag = 'approve' | 'deny' | undefined;

/** The reason a denied call's result gives the model (H5), by where the "no" came from. */
const DENIED_BY_FLAG = 'Denied with --deny on the command line.';
const DENIED_AT_PROMPT = 'The user answered no at the prompt.';

/** One key the person pressed, as the prompt reads it. */
type PromptKey = 'y' | 'n' | 'l' | 'ctrl-c';

/** What asking needs: the terminal's input, the view to draw the question on, and the program's Ctrl+C. */
export interface Asking {
  stdin: NodeJS.ReadStream;
  view: RunView;
  /** Presses the program's Ctrl+C (the first aborts the run). */
  interrupt: () => void;
}

/**
 * Reads one of the prompt's keys (`y`, `n`, `l`, either case, or Ctrl+C) from a terminal in
 * raw mode; other keys are ignored. Resolves `undefined` when `signal` aborts or the input
 * ends first. Raw mode
 * and the stream's flowing state are put back as they were, so nothing keeps the process alive.
 */
function readKey(stdin: NodeJS.ReadStream, signal: AbortSignal): Promise<PromptKey | undefined> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve(undefined);
      return;
    }
    const wasRaw = stdin.isRaw === true;
    const done = (key: PromptKey | undefined): void => {
      stdin.off('data', onData);
      stdin.off('end', onEnd);
      signal.removeEventListener('abort', onAbort);
      stdin.setRawMode?.(wasRaw);
      stdin.pause();
      resolve(key);
    };
    const onData = (chunk: Buffer | string): void => {
      for (const char of chunk.toString()) {
        if (char === '\u0003') return done('ctrl-c');
        const key = char.toLowerCase();
        if (key === 'y' || key === 'n' || key === 'l') return done(key);
      }
    };
    const onAbort = (): void => done(undefined);
    // The terminal went away: no answer will come (treated as "later").
    const onEnd = (): void => done(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    stdin.setRawMode?.(true);
    stdin.on('data', onData);
    stdin.once('end', onEnd);
    stdin.resume();
  });
}

/**
 * The question shown for one request: the call's name and the keys first, what "later" does
 * and the call's arguments after them, so a narrow terminal (60 columns) cuts the details,
 * never which call is asked about or how to answer.
 */
export function promptText(request: Pick<ToolApprovalRequest, 'toolName' | 'input'>): string {
  const args = argsSummary(request.input);
  return `approve ${truncate(oneLine(request.toolName), 24)}? y yes · n no · l later (save the state and exit)${args === '' ? '' : ` — ${args}`}`;
}

/** The response a flag gives a request. */
function flagResponse(request: ToolApprovalRequest, flag: 'approve' | 'deny'): ToolApprovalResponse {
  return flag === 'approve' ? { approvalId: request.approvalId, approved: true } : { approvalId: request.approvalId, approved: false, reason: DENIED_BY_FLAG };
}

/**
 * Asks about one request on the terminal: draws the question and the row's state, reads a
 * key. `'later'` for `l`, and for Ctrl+C (which is passed on to the program first).
 */
async function ask(asking: Asking, request: ToolApprovalRequest, signal: AbortSignal): Promise<ToolApprovalResponse | 'later'> {
  const { view } = asking;
  view.approval?.(request.index, request.reason, true);
  view.prompt?.(promptText(request));
  let key: PromptKey | undefined;
  try {
    key = await readKey(asking.stdin, signal);
  } finally {
    view.prompt?.(undefined);
  }
  if (key === 'ctrl-c') asking.interrupt();
  if (key === 'y' || key === 'n') view.approval?.(request.index, undefined, false);
  if (key === 'y') return { approvalId: request.approvalId, approved: true };
  if (key === 'n') return { approvalId: request.approvalId, approved: false, reason: DENIED_AT_PROMPT };
  return 'later';
}

/**
 * The `approve` option of a run: the flag's answer; on a terminal, a question per request
 * until the person says "later" (then every request is left for the state file); else
 * `undefined` — nothing answers, the batch pauses.
 */
export function approvalHandler(flag: ApprovalFlag, asking: Asking | undefined): ToolApprovalHandler | undefined {
  if (flag !== undefined) return (request) => flagResponse(request, flag);
  if (asking === undefined) return undefined;
  let later = false;
  return async (request, { signal }) => {
    if (later) return undefined;
    const answer = await ask(asking, request, signal);
    if (answer !== 'later') return answer;
    later = true;
    return undefined;
  };
}

/**
 * Decides the pending requests of a paused run that is resumed: all by the flag, or one by
 * one on the terminal; `undefined` when the person says "later" (nothing runs).
 */
export async function decideAll(requests: readonly ToolApprovalRequest[], flag: ApprovalFlag, asking: Asking | undefined, signal: AbortSignal): Promise<ToolApprovalResponse[] | undefined> {
  if (flag !== undefined) return requests.map((request) => flagResponse(request, flag));
  if (asking === undefined) return undefined;
  const responses: ToolApprovalResponse[] = [];
  for (const request of requests) {
    const answer = await ask(asking, request, signal);
    if (answer === 'later') return undefined;
    responses.push(answer);
  }
  return responses;
}

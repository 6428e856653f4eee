/**
 * The event loop's turn (contract A7): a source that settles its steps without ever awaiting
 * a timer or I/O (an async generator yielding in a tight loop, an MCP client draining a
 * backlog of progress) keeps the microtask queue busy, and while it is busy no timer fires —
 * not a call's timeout (A4), not its grace period (A3), not the consumer's own `setTimeout`.
 * Every merge source is stepped through `MergeEngine.pull` (merge.ts), so that one place asks
 * {@link TurnClock.tick} before each step; once the work since the last macrotask has gone
 * on for {@link TURN_BUDGET_MS}, pulls are held until the host has run one macrotask turn,
 * then resumed in the order they were held.
 *
 * How "since the last macrotask" is known without a cost per step: every
 * {@link CHECK_EVERY} pulls the clock is read, and if no watch is out, a macrotask is
 * scheduled (the watch) that marks the turn when it runs. A watch still out after the budget
 * means the loop has not turned: hold. A run that awaits I/O lets its watch run, so it is
 * never held; a spinning one is held once per budget.
 *
 * The macrotask is `setImmediate` where it exists (Node, Bun: after the poll phase, so the
 * loop's next timers phase comes within one hop), else a `MessageChannel` message (browsers,
 * Deno, workers: no 4 ms clamp), else `setTimeout(0)`. The host's functions and clock are
 * read once, when the module loads, so fake timers installed later (a test's) cannot stop
 * the real loop's turn. docs/adr/0012-turn-clock.md.
 *
 * @module
 */
/** Most continuous microtask-only work, in ms, before pulls wait for a macrotask turn. */
const TURN_BUDGET_MS = 5;
/** Pulls between two readings of the clock. */
const CHECK_EVERY = 16;

type Schedule = (callback: () => void) => void;

/** The part of the web's `MessageChannel` used here. */
interface HostMessageChannel {
  port1: { onmessage: (() => void) | null; close(): void };
  port2: { postMessage(message: unknown): void };
}

/** The host's macrotask, read once (see the module comment). */
function hostSchedule(): Schedule {
  const g = globalThis as unknown as { setImmediate?: (callback: () => void) => unknown; MessageChannel?: new () => HostMessageChannel };
  const immediate = g.setImmediate;
  if (typeof immediate === 'function') return (callback) => void immediate(callback);
  const Channel = g.MessageChannel;
  if (typeof Channel === 'function') {
    return (callback) => {
      // A channel per turn, closed once used: an open port with a listener keeps some hosts alive.
      const channel = new Channel();
      channel.port1.onmessage = () => {
        channel.port1.close();
        callback();
      };
      channel.port2.postMessage(undefined);
    };
  }
  const timeout = setTimeout;
  return (callback) => void timeout(callback, 0);
}

const schedule = hostSchedule();
const clock: () => number = typeof performance === 'object' && typeof performance.now === 'function' ? performance.now.bind(performance) : Date.now;

/**
 * The process's one turn clock: shared by every merge engine and every child-call loop, so
 * all of them hold together (one loop held while another spins would not let the loop turn).
 *
 * State: `#steps` counts steps since the last clock reading; `#limit` is {@link CHECK_EVERY},
 * or 0 while holding (every step then goes to `#check`); `#watchedAt` is when the watch went
 * out, `-1` when none is out; `#held` the work waiting for the turn, in the order it came.
 */
class TurnClock {
  #steps = 0;
  #limit = CHECK_EVERY;
  #watchedAt = -1;
  readonly #held: (() => void)[] = [];
  readonly #turn = (): void => {
    this.#watchedAt = -1;
    this.#steps = 0;
    this.#limit = CHECK_EVERY;
    for (const resume of this.#held.splice(0)) resume();
  };

  /**
   * Counts one step of a loop; true when that step must wait for the next macrotask turn
   * (hand it to {@link TurnClock.later}, or await {@link TurnClock.turn}).
   */
  tick(): boolean {
    return ++this.#steps >= this.#limit && this.#check();
  }

  /** Runs `resume` at the next macrotask turn, after the work held before it. */
  later(resume: () => void): void {
    this.#held.push(resume);
  }

  /** Resolves at the next macrotask turn. */
  turn(): Promise<void> {
    return new Promise((resolve) => this.#held.push(resolve));
  }

  #check(): boolean {
    if (this.#limit === 0) return true;
    this.#steps = 0;
    const now = clock();
    if (this.#watchedAt < 0) {
      this.#watchedAt = now;
      schedule(this.#turn);
      return false;
    }
    if (now - this.#watchedAt < TURN_BUDGET_MS) return false;
    this.#limit = 0;
    return true;
  }
}

/** @internal The turn clock every `MergeEngine` and child-call loop asks before it steps a source. */
export const turnClock = new TurnClock();

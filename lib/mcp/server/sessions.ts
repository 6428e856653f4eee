/**
 * The sessions of an MCP server over Streamable HTTP: a table with a cap and an idle expiry,
 * so that clients that come and go (or never say goodbye with `DELETE`) cannot grow the
 * server without bound.
 *
 * A session is *busy* while one of its HTTP requests is open (a POST waiting for its
 * response, a GET holding the server-to-client stream); a busy session never expires. It is
 * *idle* from the moment its last request ended; after `idleMs` of that it expires: the
 * table closes it and forgets it, and its client's next request gets 404 (the MCP
 * specification's way to say "start a new session").
 *
 * @module
 */

/** Default of {@link McpSessionLimits.maxSessions}. */
const DEFAULT_MAX_SESSIONS = 500;
/** Default of {@link McpSessionLimits.sessionIdleMs}: 10 minutes. */
const DEFAULT_SESSION_IDLE_MS = 10 * 60 * 1000;

/** How many sessions an HTTP MCP server keeps, and for how long an idle one lives. */
export interface McpSessionLimits {
  /**
   * The most sessions at once. A client that starts one more (an `initialize` POST) while
   * the table is full, after the idle sessions past their expiry were closed, gets HTTP 503
   * with a JSON-RPC error body naming the limit; the sessions already open go on.
   * @default 500
   */
  maxSessions?: number;
  /**
   * How long, in ms, a session with no open request lives before it is closed and forgotten
   * (its client's next request gets 404). `Infinity`: never.
   * @default 600_000 (10 minutes)
   */
  sessionIdleMs?: number;
}

/** What the table needs of a session: a way to close it. */
export interface ClosableSession {
  close(): Promise<void>;
}

/**
 * One row of the table.
 *
 * Invariants: `open` counts the session's HTTP requests not yet closed (≥ 0); `idleSince`
 * is the clock's time when `open` last went to 0 (or the row was made), meaningless while
 * `open > 0`.
 */
interface Row<S> {
  readonly session: S;
  open: number;
  idleSince: number;
}

/**
 * A bounded map from session id to session, with idle expiry on an injected clock.
 * {@link sweep} closes the expired sessions; the owner calls it on a timer and before
 * refusing a new session for want of room.
 */
export class SessionTable<S extends ClosableSession> {
  readonly #rows = new Map<string, Row<S>>();
  readonly #max: number;
  readonly #idleMs: number;
  readonly #now: () => number;
  /** Sessions closed because they were idle too long, since the table was made. */
  expired = 0;
  /** `initialize` requests refused because the table was full. */
  refused = 0;

  /** @param now - the clock, in ms (injected by the specs). @default Date.now */
  constructor(limits: McpSessionLimits = {}, now: () => number = Date.now) {
    const max = limits.maxSessions ?? DEFAULT_MAX_SESSIONS;
    const idleMs = limits.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;
    if (!(Number.isInteger(max) && max > 0)) throw new TypeError(`serveMcp: maxSessions must be a positive integer, received ${String(max)}`);
    if (!(typeof idleMs === 'number' && idleMs > 0)) throw new TypeError(`serveMcp: sessionIdleMs must be a positive number of ms (Infinity: never), received ${String(idleMs)}`);
    this.#max = max;
    this.#idleMs = idleMs;
    this.#now = now;
  }

  get size(): number {
    return this.#rows.size;
  }

  get max(): number {
    return this.#max;
  }

  get idleMs(): number {
    return this.#idleMs;
  }

  /** True when one more session fits (after closing the expired ones). */
  hasRoom(): boolean {
    if (this.#rows.size < this.#max) return true;
    this.sweep();
    return this.#rows.size < this.#max;
  }

  /** Adds a session (its first request is open: the `initialize` POST). */
  add(id: string, session: S): void {
    this.#rows.set(id, { session, open: 1, idleSince: this.#now() });
  }

  get(id: string): S | undefined {
    return this.#rows.get(id)?.session;
  }

  /** A request of the session opened: it is busy until the matching {@link release}. */
  hold(id: string): void {
    const row = this.#rows.get(id);
    if (row !== undefined) row.open++;
  }

  /** A request of the session closed. */
  release(id: string): void {
    const row = this.#rows.get(id);
    if (row === undefined || row.open === 0) return;
    if (--row.open === 0) row.idleSince = this.#now();
  }

  /** Forgets a session (it was closed: DELETE, its transport closed, the server stops). */
  delete(id: string): void {
    this.#rows.delete(id);
  }

  /** Every session in the table. */
  *values(): IterableIterator<S> {
    for (const row of this.#rows.values()) yield row.session;
  }

  /** Every session, forgotten: for the server's close. */
  drain(): S[] {
    const sessions = [...this.#rows.values()].map((row) => row.session);
    this.#rows.clear();
    return sessions;
  }

  /**
   * Closes and forgets every session idle for `idleMs` or more. Returns how many; their
   * `close()` runs in the background (a failure is ignored: the session is gone either way).
   */
  sweep(): number {
    if (this.#idleMs === Infinity) return 0;
    const now = this.#now();
    let closed = 0;
    for (const [id, row] of this.#rows) {
      if (row.open > 0 || now - row.idleSince < this.#idleMs) continue;
      this.#rows.delete(id);
      closed++;
      void row.session.close().catch(() => undefined);
    }
    this.expired += closed;
    return closed;
  }
}

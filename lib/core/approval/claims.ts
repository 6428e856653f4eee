/**
 * Single use of a paused state (contract H7): the application's store (`resume.claim`), and
 * the process's own memory of the ids it consumed, which forgets an id only once its state
 * has expired (a state past its `expiresAt` is refused whether or not its id is remembered).
 *
 * @module
 */

/** What `resume.claim` is told about the state besides its id. */
export interface StateClaimInfo {
  /**
   * When the state stops being resumable, in ms since the epoch (from the signed state:
   * pause time + `stateTtlMs`). A store can drop the claim after it, e.g. Redis
   * `SET key 1 NX PXAT expiresAt`.
   */
  readonly expiresAt: number;
}

/**
 * Claims a paused state's id for one resume, in a store the application provides (contract
 * H7): answers `true` for the first claim of an id and `false` for every later one. It runs
 * after every other check of the resume passed and before the id is marked consumed in this
 * process: `false` refuses the resume (`already_resumed`), a throw refuses it with code
 * `claim` and consumes nothing (the same resume can be retried). Required with
 * `signingSecret`: a signed state is one that leaves the process, and only a store every
 * process shares keeps it single-use. {@link inMemoryClaim} is one for a single process.
 *
 * @example
 * ```ts
 * // PostgreSQL: a primary key on state_id; the insert succeeds once.
 * const claim: StateClaim = async (stateId, { expiresAt }) =>
 *   (await db.query('insert into claims (state_id, expires_at) values ($1, to_timestamp($2 / 1000.0)) on conflict do nothing', [stateId, expiresAt])).rowCount === 1;
 * ```
 */
export type StateClaim = (stateId: string, info: StateClaimInfo) => boolean | Promise<boolean>;

/**
 * The ids claimed in one process, each kept until its state expires. Memory is bounded by
 * the resumes made within one `stateTtlMs` (about 150 bytes per id, as `bench/state-limits.ts` measures).
 * Invariant: every id whose `expiresAt` is still ahead is in `#ids`; expired ones are
 * dropped in sweeps, each sweep after the map has doubled, so a claim costs O(1) amortized.
 */
class ClaimMemory {
  /** Claimed id → its state's `expiresAt` (ms since the epoch). */
  readonly #ids = new Map<string, number>();
  /** Size at which the next sweep runs. */
  #sweepAt = 1024;

  /** True when `id` was claimed here and not yet forgotten. */
  has(id: string): boolean {
    return this.#ids.has(id);
  }

  /** Claims `id` until `expiresAt`: `true` the first time, `false` while it is remembered. */
  claim(id: string, expiresAt: number, now: number): boolean {
    if (this.#ids.has(id)) return false;
    if (this.#ids.size >= this.#sweepAt) {
      for (const [known, until] of this.#ids) if (until <= now) this.#ids.delete(known);
      this.#sweepAt = Math.max(1024, 2 * this.#ids.size);
    }
    this.#ids.set(id, expiresAt);
    return true;
  }
}

/**
 * A `resume.claim` for one process: remembers every id it claimed until that state expires
 * (so it never lets a replay through while the state could still be resumed, and its memory
 * is bounded by the resumes of one `stateTtlMs`). Use it when every resume of a signed state
 * happens in this process — one server, no restart between pause and resume; a fleet, or a
 * restart, needs a shared store (a database row, Redis `SET NX`).
 *
 * @returns a fresh store; each call of `inMemoryClaim()` has its own memory.
 * @example
 * ```ts
 * const claim = inMemoryClaim();
 * runTools(calls, { tools, signingSecret, resume: { state, approvals, claim } });
 * ```
 */
export function inMemoryClaim(): StateClaim {
  const memory = new ClaimMemory();
  return (stateId, { expiresAt }) => memory.claim(stateId, expiresAt, Date.now());
}

/** The ids this process consumed: checked before `resume.claim`, marked after it (H7). */
export const processClaims = new ClaimMemory();

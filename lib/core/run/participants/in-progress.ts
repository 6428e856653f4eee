/**
 * `onInProgressChange` as a participant: the set of executing call ids, told to the
 * listener each time it changes. Only a run with the option has it; the run tells it when a
 * call starts executing (stage 2) and when its tool settles.
 *
 * @module
 */
import { emitWarning } from '../../values/platform.ts';
import { thrownText } from '../../values/guards.ts';

export class InProgress {
  readonly #listener: (ids: ReadonlySet<string>) => void;
  /** Executing call ids; a call id is in it while its count is above zero. */
  readonly #ids = new Set<string>();
  /** How many executing calls have each id (ids can repeat). */
  readonly #counts = new Map<string, number>();

  constructor(listener: (ids: ReadonlySet<string>) => void) {
    this.#listener = listener;
  }

  /** Adds or removes one executing call and tells the listener when the set changed (a throw there is reported, not raised). */
  change(id: string, running: boolean): void {
    const ids = this.#ids;
    const counts = this.#counts;
    const count = (counts.get(id) ?? 0) + (running ? 1 : -1);
    if (count > 0) counts.set(id, count);
    else counts.delete(id);
    const changed = running ? count === 1 : count === 0;
    if (!changed) return;
    if (running) ids.add(id);
    else ids.delete(id);
    try {
      this.#listener(ids);
    } catch (error) {
      emitWarning(`toolrun: onInProgressChange threw and was ignored: ${thrownText(error)}`);
    }
  }
}

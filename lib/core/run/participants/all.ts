/**
 * `Participants`: the participants of one run as one {@link CallLifecycle}, each called in
 * the order it was registered (the journal, then tracing), so the run calls one object at
 * each point of a call's life. A run with no participant has none ({@link Participants.of}
 * gives `undefined`) and calls nothing.
 *
 * @module
 */
import type { CallRecord } from '../call.ts';
import type { CallEnd, CallLifecycle } from '../../seams/lifecycle.ts';
import type { Outcome } from '../stages/outcome.ts';
import type { Tool } from '../../tool/tool.ts';

type Participant = CallLifecycle<CallRecord, Outcome>;

export class Participants implements Participant {
  readonly #all: readonly Participant[];

  private constructor(all: readonly Participant[]) {
    this.#all = all;
  }

  /** The given participants (each `undefined` left out) in this order; `undefined` when none is left. */
  static of(...given: (Participant | undefined)[]): Participants | undefined {
    const all = given.filter((participant) => participant !== undefined);
    return all.length === 0 ? undefined : new Participants(all);
  }

  /** False as soon as one participant refuses (J9): the later ones are not called. */
  handOut(record: CallRecord, tool: Tool | undefined): boolean {
    for (const participant of this.#all) if (!participant.handOut(record, tool)) return false;
    return true;
  }

  answered(record: CallRecord, tool: Tool | undefined): void {
    for (const participant of this.#all) participant.answered(record, tool);
  }

  /** The last answer a participant gave, or `undefined` when none did. */
  prepared(record: CallRecord): Outcome | undefined {
    let answer: Outcome | undefined;
    for (const participant of this.#all) answer = participant.prepared(record) ?? answer;
    return answer;
  }

  progress(record: CallRecord, value: unknown, replayed: boolean): void {
    for (const participant of this.#all) participant.progress(record, value, replayed);
  }

  ended(record: CallRecord, end: CallEnd): void {
    for (const participant of this.#all) participant.ended(record, end);
  }
}

/**
 * What a property case observed, handed to the checkers of each contract group: the
 * scenario, what every tool and hook logged, what the consumer received, and how the run
 * ended. `Seen` is what the ordering checker derives from the events for the others.
 */
import type { ToolBatch, ToolEvent } from '../../../lib/core/run/events.ts';
import type { ToolCall } from '../../../lib/core/tool/tool.ts';
import type { CallLog, Coverage, Mark, Received, Scenario } from '../model.ts';

export interface Observed {
  sc: Scenario;
  /** Number of calls. */
  n: number;
  calls: ToolCall[];
  logs: CallLog[];
  /** Every event the consumer received, stamped. */
  received: Received[];
  /** The generator's return value, when the consumer read to the end with next(). */
  batch: ToolBatch | undefined;
  /** When the consumer began to leave early, and when its exit completed. */
  stopped: Mark | undefined;
  stopDoneMark: Mark | undefined;
  consumerStopped: boolean;
  /** When the run's signal aborted, if it did. */
  runAbort: Mark | undefined;
  /** The effective abortGraceMs. */
  grace: number;
  maxCallerListeners: number;
  /** When each call of an async stream was delivered, and how many were. */
  deliveries: Mark[];
  delivered: number;
  uniqueIds: boolean;
  /** Snapshots of the executing set, each time onInProgressChange ran. */
  progressLog: (Mark & { ids: string[] })[];
  /** The caller's signal's reason, after the run. */
  signalReason: unknown;
  coverage: Coverage | undefined;
}

export type EndSeen = Extract<ToolEvent, { type: 'tool_execution_end' }> & { mark: Mark };

export interface Seen {
  ends: EndSeen[];
  endByIndex: Map<number, EndSeen>;
  results: Extract<ToolEvent, { type: 'tool_result' }>[];
  resultMarks: Mark[];
  updates: number[][];
  updateMarks: Mark[][];
  /** How many results were released; equals the lowest index not ended at the end. */
  released: number;
}

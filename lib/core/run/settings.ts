/**
 * `RunSettings`: what a run reads of its options, once, at construction — the base of
 * {@link Run} (run.ts), so that the run's own file is the life of its calls
 * (docs/adr/0040-run-keeps-the-life-of-a-call.md). Each setting is a plain field, read by
 * the run and by the stages (`PrepareInput`, `FinalizeInput`, `JournalInput`) at one load
 * each; the two derived values a stage may need, the tool names of an "unknown tool" error
 * and the standing decisions (H11), are made on first use.
 *
 * @module
 */
import { CancelScope } from '../streams/abort.ts';
import { STANDING_DECISIONS, type StandingDecision } from '../approval/approval.ts';
import { DEFAULTS } from '../values/defaults.ts';
import type { InterruptedCallPolicy, ToolJournal } from '../seams/journal.ts';
import { toolTable, type RunToolsOptions } from './options.ts';
import type { Tool } from '../tool/tool.ts';

/** A run's settings; it *is* the run's cancellation scope (the run extends it). */
export class RunSettings extends CancelScope {
  readonly options: RunToolsOptions;
  readonly tools: ReadonlyMap<string, Tool>;
  /** Most calls handed out and not ended: 1 in sequential mode (S1, S2). */
  readonly concurrency: number;
  readonly sequential: boolean;
  readonly graceMs: number;
  readonly maxResultChars: number;
  readonly beforeToolCall: RunToolsOptions['beforeToolCall'];
  readonly afterToolCall: RunToolsOptions['afterToolCall'];
  readonly approve: RunToolsOptions['approve'];
  /** The batch's journal (J1); `undefined`: none, and no call has an entry. */
  readonly journal: ToolJournal | undefined;
  readonly interruptedCalls: InterruptedCallPolicy;
  /**
   * Decisions given with `always: true`, by tool name (H11): read by prepare before `approve`
   * is asked, written when a decision stands. `runAgent`'s own map when it passed one (one
   * map for every turn), else this run's, made on first use (most runs never ask): read it
   * through {@link standing}.
   */
  #standing: Map<string, StandingDecision> | undefined;
  #toolNames: string | undefined;

  constructor(options: RunToolsOptions) {
    super();
    this.options = options;
    this.tools = toolTable(options.tools);
    this.sequential = options.mode === 'sequential';
    this.concurrency = this.sequential ? 1 : (options.maxConcurrency ?? DEFAULTS.maxConcurrency);
    this.graceMs = options.abortGraceMs ?? DEFAULTS.abortGraceMs;
    this.maxResultChars = options.maxResultChars ?? DEFAULTS.maxResultChars;
    this.beforeToolCall = options.beforeToolCall;
    this.afterToolCall = options.afterToolCall;
    this.approve = options.approve;
    this.#standing = (options as { [STANDING_DECISIONS]?: Map<string, StandingDecision> })[STANDING_DECISIONS];
    this.journal = options.journal;
    this.interruptedCalls = options.interruptedCalls ?? 'unknown';
  }

  /** True once the run was aborted or the consumer left: nothing new may start. */
  get stopped(): boolean {
    return this.cause !== undefined;
  }

  /** The decisions that stand for a tool (H11), by name; see `#standing`. */
  get standing(): Map<string, StandingDecision> {
    return (this.#standing ??= new Map());
  }

  /** The available tool names, for "unknown tool" errors: computed once per run. */
  get toolNames(): string {
    return (this.#toolNames ??= [...this.tools.keys()].join(', '));
  }
}

/**
 * The peers toolrun is compared with, loaded from `bench/node_modules` (installed by
 * `npm run bench` from `bench/package.json`, never a dependency of the library).
 *
 * They are imported dynamically through a `string` specifier and typed here by the few
 * members the bench uses, so the root `tsc --noEmit` passes on a fresh clone where
 * `bench/node_modules` does not exist yet. ix is a dependency of the library itself and is
 * imported statically where it is used.
 *
 * @module
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** `bench/`, where the peers' `node_modules` lives. */
export const BENCH_DIR = dirname(fileURLToPath(import.meta.url));

/** The pi-agent-core event fields the bench reads. */
export interface PiEvent {
  type: string;
  toolCallId?: string;
  message?: { role: string; toolCallId?: string };
}

/** A pi-agent-core `AgentTool`, reduced to what the loop calls. */
export interface PiTool {
  name: string;
  label: string;
  description: string;
  parameters: unknown;
  executionMode?: 'sequential' | 'parallel';
  execute: (
    toolCallId: string,
    params: unknown,
    signal: AbortSignal | undefined,
    onUpdate: (partial: PiToolResult) => void,
  ) => Promise<PiToolResult>;
}

/** A pi-agent-core `AgentToolResult`. */
export interface PiToolResult {
  content: { type: 'text'; text: string }[];
  details: unknown;
}

interface PiStream {
  push(event: unknown): void;
}

interface PiAgentCore {
  runAgentLoop(
    prompts: unknown[],
    context: { systemPrompt: string; messages: unknown[]; tools: PiTool[] },
    config: Record<string, unknown>,
    emit: (event: PiEvent) => void | Promise<void>,
    signal?: AbortSignal,
    streamFn?: (...args: unknown[]) => PiStream,
  ): Promise<unknown[]>;
}

interface PiAi {
  createAssistantMessageEventStream(): PiStream;
  Type: {
    Object(properties: Record<string, unknown>): unknown;
    Number(): unknown;
  };
}

type AsyncSource<T> = AsyncIterable<T>;

/** The loaded peers. */
export interface Peers {
  piAgentCore: PiAgentCore;
  piAi: PiAi;
  /** it-merge's default export: `merge(...sources)`. */
  itMerge: <T>(...sources: AsyncSource<T>[]) => AsyncIterable<T>;
  /** `Repeater.merge(sources)` from @repeaterjs/repeater. */
  repeaterMerge: <T>(sources: AsyncSource<T>[]) => AsyncIterable<T>;
  /** vega, for the charts: `new View(parse(spec), { renderer: 'none' }).toSVG()`. */
  vega: {
    parse(spec: unknown): unknown;
    View: new (runtime: unknown, options: { renderer: 'none' }) => { toSVG(): Promise<string>; finalize(): void };
  };
}

/** True when `bench/node_modules` holds every peer (`npm ci --prefix bench` has run). */
export function peersInstalled(): boolean {
  return ['@mariozechner/pi-agent-core', '@mariozechner/pi-ai', 'it-merge', '@repeaterjs/repeater', 'vega'].every((name) =>
    existsSync(join(BENCH_DIR, 'node_modules', ...name.split('/'), 'package.json')),
  );
}

let loaded: Promise<Peers | undefined> | undefined;

/** Imports the peers once; `undefined` when they are not installed. */
export function loadPeers(): Promise<Peers | undefined> {
  loaded ??= (async () => {
    if (!peersInstalled()) return undefined;
    const load = (specifier: string): Promise<unknown> => import(specifier);
    const [piAgentCore, piAi, itMerge, repeater, vega] = await Promise.all([
      load('@mariozechner/pi-agent-core'),
      load('@mariozechner/pi-ai'),
      load('it-merge'),
      load('@repeaterjs/repeater'),
      load('vega'),
    ]);
    const Repeater = (repeater as { Repeater: { merge: Peers['repeaterMerge'] } }).Repeater;
    return {
      piAgentCore: piAgentCore as PiAgentCore,
      piAi: piAi as PiAi,
      itMerge: (itMerge as { default: Peers['itMerge'] }).default,
      repeaterMerge: (sources) => Repeater.merge(sources),
      vega: vega as Peers['vega'],
    };
  })();
  return loaded;
}

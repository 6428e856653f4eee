/**
 * Contract W1 over the whole recorded corpus (../shared/corpus, when it is there): every
 * batch the replay runs (real calls of real conversations, their recorded outputs) gives the
 * same events after toEventStream → a real loopback HTTP response → fetch → fromEventStream
 * as on the server, through JSON, and the same batch.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { replay } from '../../lib/cli/replay.ts';
import type { ToolEvent } from '../../lib/core/run/events.ts';
import { fromEventStream, toEventStream } from '../../lib/index.ts';
import { recordingView } from '../cli/replay-view.ts';
import { corpusDir, corpusSkipNote, hasCorpus } from '../formats/corpus.ts';
import { serveWeb } from './web-server.ts';

/** What JSON makes of a value, with an Error as { name, message } (the wire form, W1). */
const throughJson = (value: unknown): unknown =>
  JSON.parse(JSON.stringify(value, (_key, v: unknown) => (v instanceof Error ? { name: v.name, message: v.message } : v)));

describe.skipIf(!hasCorpus)(`W1: the corpus's events through an event stream over HTTP, equal${corpusSkipNote}`, () => {
  let runs: Array<{ title: string; events: ToolEvent[] }>;

  beforeAll(async () => {
    const recorder = recordingView();
    await replay(corpusDir, { view: recorder.view, delayMs: 0 });
    runs = recorder.runs;
  }, 60_000);

  it('every replayed batch: the same events, in order, and its end', async () => {
    expect(runs.length).toBeGreaterThan(20);
    let current: ToolEvent[] = [];
    async function* play(): AsyncGenerator<ToolEvent, { events: number }> {
      for (const event of current) yield event;
      return { events: current.length };
    }
    const server = await serveWeb(() => new Response(toEventStream(play())));
    try {
      let total = 0;
      for (const run of runs) {
        current = run.events;
        const response = await fetch(`${server.url}/replay`);
        const received: ToolEvent[] = [];
        const reader = fromEventStream<ToolEvent, { events: number }>(response.body!);
        let step = await reader.next();
        for (; !step.done; step = await reader.next()) received.push(step.value);
        expect(received, run.title).toEqual(throughJson(run.events));
        expect(step.value).toEqual({ events: run.events.length });
        total += received.length;
      }
      expect(total).toBeGreaterThan(100);
    } finally {
      await server.close();
    }
  });
});

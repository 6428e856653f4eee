/**
 * The getting-started examples (`examples/getting-started/*.ts`), one per provider, run as
 * a user runs them (`node --import tsx examples/getting-started/<provider>.ts`), offline:
 * each starts its fake provider on 127.0.0.1 and talks to it through the official SDK. The
 * provider variables that would point an example at a real endpoint are removed from the
 * child's environment, so this spec never leaves the machine.
 *
 * The final answer is written by the fake model from the tool results it received in the
 * second request, and a request without one result per call is answered with HTTP 400: an
 * example that dropped, reordered or never sent a result fails here.
 */
import { describe, expect, it } from 'vitest';
import { fakeProvider } from '../../examples/getting-started/shared.ts';
import { runExample } from './run-example.ts';

/** The examples, and the ids their fake model gives the three calls. */
const EXAMPLES: Record<string, readonly [string, string, string]> = {
  anthropic: ['toolu_01', 'toolu_02', 'toolu_03'],
  'openai-chat': ['call_a1', 'call_b2', 'call_c3'],
  'openai-responses': ['call_01', 'call_02', 'call_03'],
  gemini: ['gemini-call-0', 'gemini-call-1', 'gemini-call-2'],
  'ai-sdk': ['call_w1', 'call_w2', 'call_t1'],
};

/** The environment without anything that would reach a real provider. */
function offlineEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of Object.keys(env)) if (/^(ANTHROPIC|OPENAI|GEMINI|GOOGLE)_/.test(name)) delete env[name];
  return env;
}

/** Runs an example offline; it must end by itself (its server closed). */
const run = (file: string) => runExample(file, offlineEnv());

describe('examples/getting-started: one agent round per provider, offline', () => {
  it.each(Object.entries(EXAMPLES))('%s.ts: parallel calls, results sent back in call order, the final answer built from them', async (name, ids) => {
    const { code, stdout, stderr } = await run(`examples/getting-started/${name}.ts`);
    expect(code, `stdout:\n${stdout}\nstderr:\n${stderr}`).toBe(0);
    expect(stderr, 'no warning from the SDK (a deprecated model, a deprecated message shape)').toBe('');
    const lines = stdout.trim().split('\n');
    // All three calls start before the first one ends: they run in parallel.
    const firstEnd = lines.findIndex((line) => line.startsWith('end '));
    expect(lines.slice(0, firstEnd)).toEqual(expect.arrayContaining(ids.map((id) => expect.stringMatching(new RegExp(`^start ${id} `)))));
    for (const id of ids) expect(lines).toContain(`end   ${id} ok`);
    expect(lines).toContain('  get_weather: looking up Paris');
    expect(lines.at(-1)).toBe('answer: Here is what I found: Paris: 18 °C, light rain; Tokyo: 24 °C, sunny; Asia/Tokyo: 18:30.');
  }, 60_000);
});

describe('examples/getting-started/shared.ts: the fake provider', () => {
  it('answers HTTP 400 with the model\'s problem, counts the requests, and closes', async () => {
    const fake = await fakeProvider(({ turn }) => (turn === 0 ? { body: { ok: true } } : { problem: 'expected the tool results' }));
    try {
      const post = (body: string) => fetch(`${fake.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      const first = await post('{}');
      expect([first.status, await first.json()]).toEqual([200, { ok: true }]);
      const second = await post('{}');
      expect([second.status, await second.json()]).toEqual([400, { error: { type: 'invalid_request_error', message: 'expected the tool results' } }]);
      const broken = await post('not json');
      expect(broken.status).toBe(400);
      expect(fake.requests).toBe(2);
    } finally {
      await fake.close();
    }
  });
});

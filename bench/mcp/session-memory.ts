/**
 * What Streamable HTTP sessions cost a `serveMcp` server, and what it keeps once they are
 * gone (2,500 idle sessions once added ~158 MB of RSS that DELETE did not give back).
 *
 * `npx tsx bench/mcp/session-memory.ts [sessions=2500] [rounds=2]` runs
 * spec/fixtures/mcp-session-memory.ts in a child process (`--expose-gc`, so every figure is
 * taken after forced GCs): per round, `sessions` sessions are opened (each initialized, with
 * one tool call), half of them DELETEd (some with a GET stream open, some mid-call), the
 * other half expired. Prints heap used and RSS before, with every session open, and after
 * each round, plus how many of the sessions' SDK servers, transports and event stores were
 * still reachable (0 expected), and the machine's load. Not part of `npm run bench` (it takes
 * minutes under load and writes nothing).
 */
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';

const sessions = Number(process.argv[2] ?? 2_500);
const rounds = Number(process.argv[3] ?? 2);
const child = fileURLToPath(new URL('../../spec/fixtures/mcp-session-memory.ts', import.meta.url));

interface Memory {
  heapUsedBytes: number;
  rssBytes: number;
}
interface Report {
  before: Memory;
  rounds: { alive: Record<string, number>; atPeak: Memory; after: Memory; ms: { open: number; end: number } }[];
}

const loadBefore = loadavg();
const proc = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', child, String(sessions), String(rounds)], { stdio: ['ignore', 'pipe', 'inherit'] });
let out = '';
proc.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
const code = await new Promise<number | null>((resolve) => proc.once('close', resolve));
if (code !== 0) throw new Error(`the child exited with ${code}`);
const report = JSON.parse(out) as Report;
const loadAfter = loadavg();

const mb = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1);
const delta = (bytes: number): string => `${bytes >= 0 ? '+' : ''}${mb(bytes)}`;
const { before } = report;
console.log(`serveMcp over Streamable HTTP, ${sessions} sessions per round, Node ${process.version}; load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')} → ${loadAfter.map((l) => l.toFixed(2)).join(' ')}`);
console.log('');
console.log('| when | heap used (MB) | vs before | RSS (MB) | vs before | still reachable (server/transport/event store) |');
console.log('| --- | ---: | ---: | ---: | ---: | --- |');
console.log(`| before | ${mb(before.heapUsedBytes)} | | ${mb(before.rssBytes)} | | |`);
report.rounds.forEach((round, i) => {
  const { atPeak, after, alive } = round;
  console.log(`| round ${i + 1}: ${sessions} open | ${mb(atPeak.heapUsedBytes)} | ${delta(atPeak.heapUsedBytes - before.heapUsedBytes)} | ${mb(atPeak.rssBytes)} | ${delta(atPeak.rssBytes - before.rssBytes)} | |`);
  console.log(`| round ${i + 1}: all gone | ${mb(after.heapUsedBytes)} | ${delta(after.heapUsedBytes - before.heapUsedBytes)} | ${mb(after.rssBytes)} | ${delta(after.rssBytes - before.rssBytes)} | ${alive.servers}/${alive.transports}/${alive.eventStores} |`);
});
console.log('');
console.log(`heap per open session: ${((report.rounds[0]!.atPeak.heapUsedBytes - before.heapUsedBytes) / sessions / 1024).toFixed(1)} KB`);

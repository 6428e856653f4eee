// `npm run lint:history`: no history in what users read. lib/, docs/, README.md, examples/
// and the titles of the specs (what a test report shows) say what is true and why; the issue,
// round or pull request a line came from, the branch it was written on and the date it
// changed belong in commit messages (docs/adr/0030-suite-and-checks.md). Then the same check
// over planted text, where each rule must fire and each look-alike that is not history (a
// round trip, an HTTP 404, a contract id, an ADR number, an MCP protocol revision, a
// Markdown anchor, a CSS colour) must not: a pattern that stopped matching fails here
// instead of passing everything. Nothing is written in the repository.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** MCP specification revisions: dates that name a protocol version, not a change. */
const PROTOCOL_REVISIONS = new Set(['2024-10-07', '2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25']);

/** Names of work branches that comments once carried. */
const BRANCH_NAMES = ['runsplit', 'durtruth', 'durwrites', 'durworkers', 'perf-steady', 'bench-runs', 'suite-load', 'resume-leak', 'mcp-cpu', 'bench-tracing'];

/**
 * The rules, each a name and a test of one line of text. A test returns the offending text
 * or undefined.
 */
export const RULES = [
  { name: 'issue number', re: /\bissues?\s+#?\d+/i },
  { name: 'round number', re: /\brounds?\s+\d+\b/i },
  { name: 'pull request number', re: /\b(?:PR|pull request)\s*#?\d+/i },
  // `#12`, but not an anchor (`](#1-overhead`), an HTML entity, a CSS colour (`color: #667;`)
  // or part of a longer token.
  { name: 'issue reference', re: /(?<![\w&/#]|\]\(|:\s{0,2})#\d+(?![\w.-]|;)/ },
  { name: 'work item', re: /\b(?:items?|points?)\s+\d+[a-z]?\b(?!\s*(?:ms|s|µs|%|of\b))/i },
  { name: 'branch', re: new RegExp(`\\b(?:branch(?:es)?\\s+[\`'"]?[a-z0-9]+(?:-[a-z0-9]+)+|(?:this|that|another|other)\\s+branch(?:es)?\\b(?!\\s+of\\b)|${BRANCH_NAMES.join('|')})\\b`, 'i') },
  { name: 'branch', re: /\bmain at [0-9a-f]{7,40}\b|\bon `?main`?(?=[\s,.;)]|$)/ },
  // The people who did the work (not "the lead byte" of a UTF-8 character).
  { name: 'people', re: /\bthe lead's\b|\bthe lead (?:chose|decides|decided|wrote|writes|merged|asked)\b|\bengineers?\b/i },
  { name: 'history phrase', re: /\b(?:since|before|after) the fix\b|\bthe code before\b/i },
  {
    name: 'date',
    test(line) {
      for (const m of line.matchAll(/\b(20\d\d-[01]\d-[0-3]\d)(T\d\d:)?/g)) {
        if (m[2] === undefined && !PROTOCOL_REVISIONS.has(m[1])) return m[0];
      }
      return undefined;
    },
  },
];

/** The first rule a line breaks, as `{ rule, text }`, or undefined. */
export function historyIn(line) {
  for (const rule of RULES) {
    const text = rule.test ? rule.test(line) : line.match(rule.re)?.[0];
    if (text !== undefined) return { rule: rule.name, text };
  }
  return undefined;
}

const TEXT_FILE = /\.(?:md|ts|mts|cts|js|mjs|cjs|html|css|txt|ya?ml|sh)$/;

function* files(dir) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
    const path = join(dir, e.name);
    if (e.isDirectory()) yield* files(path);
    else if (TEXT_FILE.test(e.name)) yield path;
  }
}

/**
 * The titles of a spec file's `describe`/`it`/`test` calls (and wrappers such as
 * `itSandboxed`, `describe.skipIf(…)`), each with its line: string and template literals,
 * as written.
 */
export function specTitles(source) {
  const out = [];
  const call = /\b(?:describe|it|test|itSandboxed|suite)(?:\.\w+(?:\((?:[^()]|\([^()]*\))*\))?)*\(\s*(['"`])/g;
  for (const m of source.matchAll(call)) {
    const quote = m[1];
    let i = m.index + m[0].length;
    let title = '';
    while (i < source.length && source[i] !== quote) {
      if (source[i] === '\\') i++;
      title += source[i];
      i++;
    }
    out.push({ line: source.slice(0, m.index).split('\n').length, title });
  }
  return out;
}

/**
 * Every line of history in `root`: whole text files of lib/, docs/, examples/ and README.md,
 * and the spec titles of spec/. Each finding is `{ file, line, rule, text }`.
 */
export function findHistory(root) {
  const found = [];
  const scan = (file, lines) => {
    for (const { line, text } of lines) {
      const hit = historyIn(text);
      if (hit) found.push({ file: relative(root, file), line, ...hit });
    }
  };
  const whole = [...files(join(root, 'lib')), ...files(join(root, 'docs')), ...files(join(root, 'examples'))];
  const readme = join(root, 'README.md');
  if (statSync(readme, { throwIfNoEntry: false })) whole.push(readme);
  for (const file of whole) {
    scan(file, readFileSync(file, 'utf8').split('\n').map((text, i) => ({ line: i + 1, text })));
  }
  for (const file of files(join(root, 'spec'))) {
    if (!/\.(?:spec|test-d)\.ts$/.test(file)) continue;
    scan(file, specTitles(readFileSync(file, 'utf8')).map(({ line, title }) => ({ line, text: title })));
  }
  return found;
}

/** Lines each rule must report, and look-alikes none may. */
export const PLANTED = {
  report: [
    ['issue number', 'Fixed in issue 19, so states paused before it are refused.'],
    ['issue number', 'describe: a cut stream (issue 12.4, O1)'],
    ['round number', 'Performance, round 2: the realistic workload'],
    ['pull request number', 'as PR 42 measured'],
    ['issue reference', 'see #123 for the profile'],
    ['issue reference', 'the hang went away (closes #38)'],
    ['work item', 'plain returns type details (item 3)'],
    ['work item', 'defineTool checks (issue-free, point 2)'],
    ['branch', 'measured on branch mcp-cpu'],
    ['branch', 'this branch treats a dropped connection as the client gone'],
    ['branch', 'the resume-leak follow-up'],
    ['people', 'engineer hot-path made the identical change'],
    ['branch', 'Before that (main at d4bd4c2, the same tools)'],
    ['people', "the lead's runs under stress-ng decide"],
    ['history phrase', 'slower since the fix'],
    ['date', 'An unknown tool name in the error text (2026-12-02)'],
  ],
  pass: [
    'a round trip through generateText',
    'rounds of 1,000 calls; 5 rounds by default; each round runs every implementation',
    'an unknown session gets 404; over the cap, 503',
    'contract J3 and H11; see docs/adr/0014-paused-state.md',
    'MCP specification 2025-06-18, and clients of 2025-11-25 or later',
    '### [1. overhead: N no-op calls](#1-overhead-n-no-op-calls-in-one-batch)',
    '#facts dt { color: #667; } .tick { background: #102040; }',
    '_Measured 2026-12-02T05:06:22Z on AMD EPYC_',
    'one line per issue, then the arguments; issue lines in plain words',
    'each branch of anyOf; a branch of the union; not a branch in `Run`',
    'at most 10 items, 2 points of the curve',
    'the first 100 items in 5 ms',
    'main(argv, io) in process; the main entry',
    'walk back to the lead byte of the last character; the hot-path readers',
    'an answer settled in an earlier round of approvals',
  ],
};

/** The planted check: the rules that missed a planted line, and the look-alikes reported. */
export function plantedCheck() {
  const missed = PLANTED.report.filter(([rule, line]) => historyIn(line)?.rule !== rule).map(([rule, line]) => `${rule}: ${line} (got ${historyIn(line)?.rule ?? 'nothing'})`);
  const falsePositives = PLANTED.pass.filter((line) => historyIn(line) !== undefined).map((line) => `${historyIn(line).rule}: ${line}`);
  return { missed, falsePositives };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const found = findHistory(root);
  for (const f of found) console.error(`  ${f.file}:${f.line}: ${f.rule}: ${f.text}`);
  if (found.length > 0) {
    console.error(`lint:history: ${found.length} line(s) carry history; say the rule or the reason, or cite docs/adr/, and put the history in the commit message`);
    process.exit(1);
  }
  console.log('lint:history: no issue, round or pull-request number, branch name or dated history in lib/, docs/, README.md, examples/ or spec titles');
  const { missed, falsePositives } = plantedCheck();
  for (const m of missed) console.error(`  planted, not reported: ${m}`);
  for (const p of falsePositives) console.error(`  look-alike reported: ${p}`);
  if (missed.length > 0 || falsePositives.length > 0) {
    console.error('lint:history: the planted check failed: a rule no longer matches what it is for, or matches what it is not');
    process.exit(1);
  }
  console.log(`lint:history: ${PLANTED.report.length} planted lines reported, ${PLANTED.pass.length} look-alikes not`);
}

/**
 * Docs that run. Every ```ts and ```js code block of README.md, docs/*.md and docs/guide/*.md is taken out of
 * its page, typechecked against the package, and — when it is a whole program — run, offline
 * (no API key, no network; servers only on 127.0.0.1).
 *
 * How a block is treated is said by an HTML comment on the line right before its fence:
 *
 * | comment                         | the block is                                   | typechecked | run |
 * | ------------------------------- | ---------------------------------------------- | ----------- | --- |
 * | (none)                          | a whole program                                | yes         | yes |
 * | `<!-- no-run: <reason> -->`     | a whole program that needs what CI has not got (an API key, a model) | yes | no |
 * | `<!-- fragment: a, b -->`       | part of a program that uses `a` and `b` without defining them; the spec prepends their declarations from {@link PRELUDE} | yes | no |
 * | `<!-- continues -->`            | the next part of the previous ts/js block of the same page: both are joined into one program, treated as the first part says | yes | as the first part |
 * | `<!-- excerpt: <path> -->`      | lines quoted from a file of the repository (e.g. `examples/tracing/agent.ts`) that is typechecked and run elsewhere; each line must be a line of that file, in the same order, consecutive except where the block has a `// …` line (any lines left out) | with its file, by `tsc` | with its file |
 *
 * Any other comment right before a ts/js fence, an unknown fragment name, or a `no-run` without
 * a reason fails the spec: no block is ever skipped silently. A new block with no comment is a
 * whole program and must run.
 *
 * The task pages of docs/guide/ are stricter ({@link GUIDE}): every ts/js block there is a whole
 * program, run as it is — no comment may precede it (no fragment, no `no-run`, no `continues`),
 * so a reader can paste any block into a file and run it. A block that needs PostgreSQL says so
 * in its fence's info string, ```` ```ts postgres ````: it reads `DBOS_SYSTEM_DATABASE_URL`, and
 * runs in a child process (`node --import tsx`) with that variable pointing at a throwaway
 * server this spec starts (lib/dbos/postgres.ts). Every fence of a guide page names its
 * language: `ts`/`js` for programs, or one of {@link NOT_PROGRAMS} (`text` for a diagram or a
 * type's shape, `sh` for a command, `json`…) for what is not a program and is not run. A bare
 * fence, another language or another info word fails. Contract ids in a guide page's prose are
 * links to the section of docs/contract.md that holds their row (`[O2](../contract.md#events-and-their-order-o)`),
 * never bare text such as "(O2)". Why: docs/adr/0060-guide-pages-are-programs.md and
 * docs/adr/0061-contract-ids-as-links.md.
 *
 * Typechecking uses one TypeScript Program over all blocks (the project's compiler options,
 * plus `checkJs` for the JavaScript blocks), with `toolrun`, `toolrun/tools`, `toolrun/testing`
 * `toolrun/mcp`, `toolrun/otel`, `toolrun/inspect` and `toolrun/dbos` mapped to their lib/ entry files by `paths`. Programs run inside this test process, imported once each, with their console
 * output captured; {@link EXPECTED_OUTPUT} says what some of them must print. A canary
 * block with a known type error goes through the same Program, so the check is seen to fail.
 * The generated files go to `.tmp/docs-examples/` (ignored by git).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startPostgres, type PostgresServer } from '../../lib/dbos/postgres.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const outDir = join(root, '.tmp/docs-examples');

/** Declarations for the names a `fragment` block may use without defining them. */
const PRELUDE: Record<string, string> = {
  assistantMessage: "declare const assistantMessage: Parameters<typeof import('toolrun').fromAnthropic>[0];",
  signal: 'declare const signal: AbortSignal;',
  calls: "declare const calls: import('toolrun').ToolCall[];",
  tools: "declare const tools: import('toolrun').Tool[];",
  download: "declare const download: import('toolrun').Tool;",
  now: "declare const now: import('toolrun').Tool;",
  lookup: "declare const lookup: import('toolrun').Tool;",
  fetchTool: "declare const fetchTool: import('toolrun').Tool;",
  history: "declare const history: import('toolrun').ToolResultMessage[];",
  messages: "declare const messages: import('@anthropic-ai/sdk').default.MessageParam[];",
  anthropic: "declare const anthropic: import('@anthropic-ai/sdk').default;",
  model: 'declare const model: string;',
  max_tokens: 'declare const max_tokens: number;',
  definitions: "declare const definitions: import('toolrun').AnthropicToolDefinition[];",
  ui: 'declare const ui: { add(index: number, name: string, args: unknown): void; progress(index: number, progress: unknown): void; done(index: number, isError: boolean, outcome: string): void };',
  askUser: 'declare function askUser(question: string, options: { signal: AbortSignal }): Promise<boolean>;',
  done: 'declare function done(progress: unknown): boolean;',
  isUpdate: "declare function isUpdate(event: import('toolrun').ToolEvent): event is import('toolrun').ToolExecutionUpdateEvent;",
  stopPressed: 'declare const stopPressed: Promise<void>;',
  draw: 'declare function draw(value: unknown): void;',
};

/** Lines (as regular expressions) that a program must print, by its label. */
const EXPECTED_OUTPUT: Record<string, RegExp[]> = {
  'README.md § In 30 seconds': [
    /^ {2}countdown: 3\b/m,
    /^ended count_primes: ok$/m,
    /"tool_use_id": "toolu_01"[\s\S]*"tool_use_id": "toolu_02"[\s\S]*"tool_use_id": "toolu_03"/,
    /9592 primes below 100000/,
  ],
  // Fails if error.type were the outcome, an unknown tool were typed, a paused call ended as an error, or the resumed batch lost the paused trace.
  'docs/tracing-example.md § Errors and pauses in the trace': [
    /^execute_tool upload \| error \| QuotaError \| exception$/m,
    /^execute_tool uplaod \| rejected \| tool_not_found \| -$/m,
    /^execute_tool remove \| pending_approval \| - \| -$/m,
    /^execute_tools \| paused \| - \| -$/m,
    /^resumed batch: child of POST \/approvals: true$/m,
    /^resumed batch: links to the paused batch: true$/m,
  ],
  'docs/guide/define-tools.md § Three shapes of `execute`': [/^ {2}download: \{"phase":"connecting"\}$/m, /^call_1: https:\/\/example\.com\/a\.txt: 1,024 bytes$/m, /^call_2: 1970-01-01T00:00:00\.000Z$/m, /^call_3: results for toolrun$/m],
  'docs/guide/define-tools.md § valibot, zod, arktype': [
    /^forecast, convert_temperature, distance_km 3 3 1$/m,
    /^ {2}forecast: looking up Rome$/m,
    /"text": "Rome: sunny for the next 3 days"/,
    /"text": "294.15"/,
    /Invalid arguments for tool \\"distance_km\\":\\n- to: to must be a string \(was missing\)[\s\S]*"is_error": true/,
  ],
  'docs/guide/define-tools.md § Tools from JSON Schema': [/^call_1 ok: Bogotá, Colombia: 21 degrees celsius$/m, /^call_2 error: Invalid arguments for tool "get_weather":$/m, /^- unit: must be one of "celsius", "fahrenheit"$/m],
  'docs/guide/tools-from-elsewhere.md § BFCL function definitions': [/^sent as math_power$/m, /^math\.power: 8, 5$/m],
  'docs/guide/tools-from-elsewhere.md § Tools from an MCP server': [/^\d+ tools, e\.g\. fs_/m, /^call_0 ok: one$/m, /^call_1 ok: two$/m],
  'docs/guide/run-a-batch.md § Run a batch': [/^start 0 search \{"q":"toolrun"\}$/m, /^ {2}0: searching toolrun$/m, /^end 1 ok ok$[\s\S]*^end 0 ok ok$/m, /^toolu_1: 3 hits for toolrun\ntoolu_2: 1970-01-01T00:00:00\.000Z$/m, /^toolu_1, toolu_2$/m],
  'docs/guide/run-a-batch.md § Run a batch (2)': [/^searching toolrun$/m, /^3$/m],
  'docs/guide/hooks.md § Hooks: permission prompts and result overrides': [/^asked: Run ls\?$[\s\S]*^asked: Run rm -rf build\?$/m, /^call_1: ran: ls \{"audited":true\}$/m, /^call_2: The user declined to run this command\. null$/m],
  'docs/guide/cancel-and-time.md § Cancel, and bound the time': [/^small: 168 primes below 1000$/m, /^huge: Tool "count_primes" timed out after 500 ms/m],
  // The fake model writes its second call only once the first has started: the program hangs (and fails) if calls waited for the reply's end.
  'docs/guide/stream-from-the-model.md § Stream from the model': [/^the model is still writing\nweather\(Paris\) starts$/m, /^the model's reply ends$/m, /^complete: Paris: 21 °C, Tokyo: 21 °C$/m],
  'docs/guide/stream-from-the-model.md § Streaming models in the agent loop': [/^message: tool_use$|^message: toolCall$/m, /^weather: ok$/m, /^message: Oslo is at 4 °C\.$/m, /^completed after 2 turns$/m],
  'docs/guide/built-in-tools.md § The built-in tools: shell, read_file, list_files, grep': [/^call_1 ok: notes\.md$/m, /^call_2 ok: /m, /^call_3 ok: /m, /^call_4 error: /m, /^call_5 (ok|error): /m],
  'docs/guide/compose-and-agents.md § Tools built from tools': [/^a\.txt: [\s\S]*alpha[\s\S]*b\.txt: [\s\S]*beta/m],
  'docs/guide/compose-and-agents.md § Tools built from tools (2)': [/^ {2}attempt 1$[\s\S]*^ {2}attempt 3$/m, /^ok: <html>https:\/\/example\.com<\/html>$/m],
  'docs/guide/compose-and-agents.md § Event pipelines with ix': [/^left at 3; finally ran: count$/m],
  'docs/guide/compose-and-agents.md § Event pipelines with ix (2)': [/^drew 3; the tool's finally ran$/m],
  'docs/guide/compose-and-agents.md § The agent loop': [/^→ list_files \{"pattern":"\*\.json"\}$/m, /^completed after 2 turns$/m, /^4 messages, ready to send again/m],
  'docs/guide/compose-and-agents.md § The agent loop (2)': [/^list_files: ok$/m, /^grep: ok$/m, /^completed after 2 turns$/m],
  'docs/guide/approvals.md § A web app that pauses': [
    /^paused: send_email \{"to":"ada@example\.com","subject":"Minutes"\}$/m,
    /^emails sent: 0$[\s\S]*^emails sent: 1$/m,
    /^completed: \[\{"type":"text","text":"Done: sent \\"Minutes\\" to ada@example\.com"\}\]$/m,
    /^again: already_resumed$/m,
    /^edited: signature$/m,
  ],
  'docs/guide/approvals.md § In a `useChat` app': [/^call_a approval-requested, call_b approval-requested$/m, /^call_a output-denied, call_b output-available$/m],
  'docs/guide/tracing.md § Tracing with OpenTelemetry': [
    /a: the service joined the trace/,
    /^execute_tool lookup, execute_tools, parse answer$/m,
    /^parse answer is a child of the call span: true$/m,
  ],
  'docs/guide/durable.md § Durable batches: the journal': [/^e1 ok replayed$/m, /^e2 interrupted answered now$/m, /^ann \(key memory:0\), bob \(key memory:1\)$/m],
  // Fails if the relaunch ran ann's journaled call again, or gave bob's run-again call a new idempotency key.
  'docs/guide/durable.md § On DBOS and PostgreSQL': [
    /^e1: sent to ann\ne2: sent to bob$/m,
    /^ann \(attempt 0, key (emails-\d+):batch:0\)\nbob \(attempt 0, key \1:batch:1\)\nbob \(attempt 1, key \1:batch:1\)$/m,
  ],
  'docs/guide/web.md § The chat with live progress': [
    /^call_1 input-available\ncall_1 output-available progress \{"percent":25\}\ncall_1 output-available progress \{"percent":50\}\ncall_1 output-available progress \{"percent":75\}\ncall_1 output-available result "saved https:\/\/example\.com\/a\.zip"$/m,
  ],
  'docs/guide/web.md § Events to any frontend over SSE': [
    /^call_1: 1\/3$[\s\S]*^call_2: 3\/3$/m,
    /^server: done, call_1 ok, call_2 ok$/m,
    /^client: 2 results$/m,
    /^client: left$/m,
    /^server: cancelled, call_1 error, call_2 error$/m,
  ],
  'docs/guide/web.md § Events to any frontend over SSE (2)': [/^call_1: \[\{"type":"text","text":"hello"\}\]$/m],
  'docs/guide/serve-over-mcp.md § Serve tools over MCP': [/^serving at http:\/\/…\/mcp$/m, /^call_1 ok: liftoff$/m, /^call_2 ok: \{"quotient":2\.5\}$/m, /^call_3 error: RangeError: cannot divide by zero$/m, /^structuredContent: \{"quotient":3\}$/m],
  'docs/guide/serve-over-mcp.md § Protecting the endpoint: a bearer token': [/^without a token: 401$/m, /^ada with mcp:tools$/m],
  'docs/guide/serve-over-mcp.md § What a served tool can ask of its client': [/^log info: asking for a name$/m, /^hello Ada$/m, /^A person denied this call to tool "wipe", so it was not run\./m],
};

/** The folder of the task pages, where every ts/js block is a whole program that runs. */
const GUIDE = 'docs/guide/';

/** Fence languages of what is not a program (a diagram, a type's shape, a command, data): never run, allowed on a guide page. */
const NOT_PROGRAMS = ['text', 'sh', 'json', 'jsonl', 'http'];

/** The longest a program of the docs may take to run (a hang guard, not a speed check). */
const RUN_TIMEOUT_MS = 60_000;

/** `postgres`: a program that needs PostgreSQL, run in a child process (see the header). */
type Kind = 'program' | 'no-run' | 'fragment' | 'postgres';

/** One ts/js code block of a page. */
interface Block {
  file: string;
  /** 1-based line of the block's first code line in the page. */
  line: number;
  lang: 'ts' | 'js';
  code: string;
  /** The comment right before the fence, if any. */
  annotation: string | undefined;
  /** The nearest heading above the block. */
  heading: string;
  /** The words of the fence's info string after the language (`postgres`). */
  info: string[];
}

/** What is checked (and maybe run) as one file: one block, or a block and its continuations. */
interface Unit {
  label: string;
  kind: Kind;
  lang: 'ts' | 'js';
  /** The source written for the typechecker: prelude + code. */
  source: string;
  /** For each line of `source`, where it comes from in the docs (`undefined` for prelude lines). */
  origins: Array<{ file: string; line: number } | undefined>;
  /** `file:line` of each block of the unit. */
  blocks: string[];
  fileName: string;
}

/** The pages whose blocks are checked: README.md, every docs/*.md and every docs/guide/*.md. */
function pages(): string[] {
  const inFolder = (folder: string) => readdirSync(join(root, folder)).filter((name) => name.endsWith('.md')).sort().map((name) => `${folder}${name}`);
  return ['README.md', ...inFolder('docs/'), ...inFolder(GUIDE)];
}

const ANNOTATION = /^<!--\s*(.*?)\s*-->$/;

/** The ts/js blocks of one page, how many ts/js fences it opens (to prove none is missed), and its fences that break the guide's rules. */
function blocksOf(file: string): { blocks: Block[]; fences: number; badFences: string[] } {
  return blocksOfIn(root, file);
}

/** {@link blocksOf} for a page under another folder than the repository's (the spec's canary). */
function blocksOfIn(base: string, file: string): { blocks: Block[]; fences: number; badFences: string[] } {
  const lines = readFileSync(join(base, file), 'utf8').split('\n');
  const blocks: Block[] = [];
  const badFences: string[] = [];
  let fences = 0;
  let heading = '';
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i]!;
    const open = /^(`{3,})(\S*)(.*)$/.exec(text);
    if (open === null) {
      const title = /^#{1,6}\s+(.*)$/.exec(text);
      if (title !== null) heading = title[1]!.trim();
      continue;
    }
    const lang = open[2]!.toLowerCase();
    const code = ['ts', 'typescript', 'js', 'javascript', 'mjs'].includes(lang);
    const info = open[3]!.trim().split(/\s+/).filter((word) => word !== '');
    if (code) fences++;
    if (file.startsWith(GUIDE)) {
      if (!code && !NOT_PROGRAMS.includes(lang)) badFences.push(`${file}:${i + 1}: fence language "${lang}" (a program is ts or js; what is not one is ${NOT_PROGRAMS.join(', ')})`);
      if (code && info.some((word) => word !== 'postgres')) badFences.push(`${file}:${i + 1}: fence info "${info.join(' ')}" (the one word known after ts/js is "postgres")`);
    }
    let end = i + 1;
    while (end < lines.length && lines[end]!.trim() !== open[1]) end++;
    if (code) {
      const previous = lines[i - 1]?.trim() ?? '';
      const annotation = ANNOTATION.exec(previous)?.[1];
      blocks.push({
        file,
        line: i + 2,
        lang: lang.startsWith('t') ? 'ts' : 'js',
        code: lines.slice(i + 1, end).join('\n'),
        annotation,
        heading,
        info,
      });
    }
    i = end;
  }
  return { blocks, fences, badFences };
}

/** Parses an annotation; throws on anything that is not the convention. */
function parseAnnotation(block: Block): { kind: Kind | 'continues' | 'excerpt'; names: string[] } {
  const where = `${block.file}:${block.line}`;
  const text = block.annotation;
  if (block.file.startsWith(GUIDE)) {
    if (text !== undefined) throw new Error(`${where}: <!-- ${text} --> before a code block: a ${GUIDE} page holds whole programs only, each run as it is (write the block as a complete program, or use a text/sh fence for what is not one)`);
    return { kind: block.info.includes('postgres') ? 'postgres' : 'program', names: [] };
  }
  if (text === undefined) return { kind: 'program', names: [] };
  if (text === 'continues') return { kind: 'continues', names: [] };
  const excerpt = /^excerpt:\s*(\S+)$/.exec(text);
  if (excerpt !== null) return { kind: 'excerpt', names: [excerpt[1]!] };
  const noRun = /^no-run:\s*(\S.*)$/.exec(text);
  if (noRun !== null) return { kind: 'no-run', names: [] };
  const fragment = /^fragment:\s*(.+)$/.exec(text);
  if (fragment !== null) {
    const names = fragment[1]!.split(',').map((name) => name.trim()).filter((name) => name !== '');
    const unknown = names.filter((name) => PRELUDE[name] === undefined);
    if (names.length === 0 || unknown.length > 0) {
      throw new Error(`${where}: fragment names ${unknown.join(', ') || '(none)'} have no declaration in PRELUDE of spec/docs/examples.spec.ts`);
    }
    return { kind: 'fragment', names };
  }
  throw new Error(`${where}: unknown annotation <!-- ${text} --> before a code block (use none, "no-run: <reason>", "fragment: <names>", "continues" or "excerpt: <path>")`);
}

/** A block quoted from a file of the repository (`<!-- excerpt: path -->`). */
interface Excerpt {
  /** `page:line` of the block. */
  where: string;
  /** The quoted file, relative to the repository's root. */
  path: string;
  code: string;
}

/** Groups the blocks of every page into units, and sets the excerpts apart. */
function collectUnits(): { units: Unit[]; excerpts: Excerpt[]; fences: number; blocks: number; badFences: string[] } {
  const units: Unit[] = [];
  const excerpts: Excerpt[] = [];
  const badFences: string[] = [];
  const labels = new Map<string, number>();
  let fences = 0;
  let blockCount = 0;
  for (const file of pages()) {
    const found = blocksOf(file);
    fences += found.fences;
    badFences.push(...found.badFences);
    blockCount += found.blocks.length;
    let current: Unit | undefined;
    for (const block of found.blocks) {
      const { kind, names } = parseAnnotation(block);
      const lines = block.code.split('\n');
      const origins = lines.map((_, i) => ({ file, line: block.line + i }));
      if (kind === 'excerpt') {
        excerpts.push({ where: `${file}:${block.line}`, path: names[0]!, code: block.code });
        current = undefined; // nothing continues an excerpt
        continue;
      }
      if (kind === 'continues') {
        if (current === undefined || current.lang !== block.lang) throw new Error(`${file}:${block.line}: "continues" needs a previous ${block.lang} block on the same page`);
        current.source += `\n${block.code}`;
        current.origins.push(...origins);
        current.blocks.push(`${file}:${block.line}`);
        continue;
      }
      const prelude = names.map((name) => PRELUDE[name]!);
      let label = `${file} § ${block.heading}`;
      const seen = labels.get(label) ?? 0;
      labels.set(label, seen + 1);
      if (seen > 0) label += ` (${seen + 1})`;
      current = {
        label,
        kind,
        lang: block.lang,
        source: [...prelude, block.code].join('\n'),
        origins: [...prelude.map(() => undefined), ...origins],
        blocks: [`${file}:${block.line}`],
        fileName: join(outDir, `${file.replace(/[^A-Za-z0-9]+/g, '-')}-${block.line}.${block.lang === 'ts' ? 'ts' : 'mjs'}`),
      };
      // A fragment is a script as far as TypeScript is concerned unless it imports; make
      // every unit a module so the declarations of two units never meet.
      current.source += '\nexport {};\n';
      units.push(current);
    }
  }
  return { units, excerpts, fences, blocks: blockCount, badFences };
}

/** The project's files (tsconfig.json's `include`) and options. */
function projectConfig(): ts.ParsedCommandLine {
  const configPath = join(root, 'tsconfig.json');
  const config = ts.readConfigFile(configPath, (path) => ts.sys.readFile(path));
  if (config.error !== undefined) throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, '\n'));
  return ts.parseJsonConfigFileContent(config.config, ts.sys, root);
}

/** The project's compiler options, plus JavaScript checking and the package's own names. */
function compilerOptions(): ts.CompilerOptions {
  const configPath = join(root, 'tsconfig.json');
  const config = ts.readConfigFile(configPath, (path) => ts.sys.readFile(path));
  if (config.error !== undefined) throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, '\n'));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  return {
    ...parsed.options,
    allowJs: true,
    checkJs: true,
    noEmit: true,
    baseUrl: root,
    paths: {
      toolrun: ['./lib/index.ts'],
      'toolrun/tools': ['./lib/tools/index.ts'],
      'toolrun/testing': ['./lib/testing.ts'],
      'toolrun/mcp': ['./lib/mcp/index.ts'],
      'toolrun/otel': ['./lib/otel/index.ts'],
      'toolrun/inspect': ['./lib/inspect/index.ts'],
      'toolrun/dbos': ['./lib/dbos/index.ts'],
    },
  };
}

/** The file a program is imported from: the same code with the package's names pointing at lib/. */
function runnableCopy(unit: Unit): string {
  const target = unit.fileName.replace(/\.(m?[jt]s)$/, '.run.$1');
  const fromDir = dirname(target);
  const entry = (path: string) => relative(fromDir, join(root, path)).split('\\').join('/');
  const code = unit.source.replace(/(from\s+|import\s*\(\s*)(['"])toolrun(\/tools|\/testing|\/mcp|\/otel|\/inspect|\/dbos)?\2/g, (_all, lead: string, quote: string, sub: string | undefined) => {
    const path = sub === undefined ? 'lib/index.ts' : sub === '/testing' ? 'lib/testing.ts' : `lib${sub}/index.ts`;
    return `${lead}${quote}${entry(path)}${quote}`;
  });
  writeFileSync(target, code);
  return target;
}

const { units, excerpts, fences, blocks: blockCount, badFences } = collectUnits();

/** A block with a type error on its second line, checked in the same Program: the check can fail. */
const CANARY: Unit = {
  label: '(canary)',
  kind: 'fragment',
  lang: 'ts',
  source: "import { runTools } from 'toolrun';\nrunTools([], { tools: 'read_file' });\nexport {};\n",
  origins: [{ file: 'canary.md', line: 10 }, { file: 'canary.md', line: 11 }],
  blocks: ['canary.md:10'],
  fileName: join(outDir, 'canary.ts'),
};

rmSync(outDir, { recursive: true, force: true });
mkdirSync(outDir, { recursive: true });
for (const unit of [...units, CANARY]) writeFileSync(unit.fileName, unit.source);

describe('docs that run: every ts/js block of README.md, docs/*.md and docs/guide/*.md', () => {
  let diagnostics = new Map<string, string[]>();

  /** `path:line: message` for every error in the project's own files (what `tsc --noEmit` reports). */
  let projectErrors: string[] = [];

  beforeAll(() => {
    // One Program for the project and the docs: this is also `npm test`'s typecheck of the
    // whole project (lib, spec, bench), so the type information is built once, not twice.
    const projectFiles = projectConfig().fileNames;
    const program = ts.createProgram([...projectFiles, ...[...units, CANARY].map((unit) => unit.fileName)], compilerOptions());
    projectErrors = projectFiles.flatMap((fileName) => {
      const file = program.getSourceFile(fileName);
      if (file === undefined) return [`${fileName} is not in the program`];
      return [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)].map((d) => {
        const where = d.start === undefined ? '' : `:${file.getLineAndCharacterOfPosition(d.start).line + 1}`;
        return `${relative(root, fileName)}${where}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
      });
    });
    const global = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()];
    diagnostics = new Map([...units, CANARY].map((unit) => {
      const file = program.getSourceFile(unit.fileName);
      if (file === undefined) return [unit.label, [`${unit.fileName} is not in the program`]];
      const found = [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)];
      return [unit.label, found.map((d) => describeDiagnostic(unit, file, d))];
    }));
    if (global.length > 0) diagnostics.set('(compiler options)', global.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')));
  }, 240_000);

  it('the whole project typechecks: every file of tsconfig.json, as `tsc --noEmit` checks it', () => {
    expect(projectErrors).toEqual([]);
  });

  it('finds every ts/js fence, and each one follows the annotation convention', () => {
    expect(blockCount).toBe(fences);
    expect(units.length).toBeGreaterThan(10);
    expect(units.some((unit) => unit.kind === 'program')).toBe(true);
  });

  it('rejects what is not the convention: an unknown comment, an undeclared fragment name, a no-run without reason', () => {
    const block = (annotation: string): Block => ({ file: 'x.md', line: 3, lang: 'ts', code: '', annotation, heading: '', info: [] });
    expect(() => parseAnnotation(block('example: a.ts#b'))).toThrow(/x\.md:3: unknown annotation <!-- example: a\.ts#b -->/);
    expect(() => parseAnnotation(block('fragment: history, nope'))).toThrow(/fragment names nope have no declaration/);
    expect(() => parseAnnotation(block('no-run:'))).toThrow(/unknown annotation/);
    expect(() => parseAnnotation(block('excerpt:'))).toThrow(/unknown annotation/);
    expect(parseAnnotation(block('fragment: history, signal'))).toEqual({ kind: 'fragment', names: ['history', 'signal'] });
    expect(parseAnnotation(block('excerpt: examples/tracing/agent.ts'))).toEqual({ kind: 'excerpt', names: ['examples/tracing/agent.ts'] });
  });

  it('a guide page holds whole programs only: any comment before a ts/js block is refused, and `postgres` in the info string marks a program that needs PostgreSQL', () => {
    const block = (annotation: string | undefined, info: string[] = []): Block => ({ file: `${GUIDE}x.md`, line: 3, lang: 'ts', code: '', annotation, heading: '', info });
    for (const annotation of ['fragment: history', 'no-run: needs a key', 'continues', 'excerpt: examples/tracing/agent.ts']) {
      expect(() => parseAnnotation(block(annotation))).toThrow(/docs\/guide\/x\.md:3: .* holds whole programs only/);
    }
    expect(parseAnnotation(block(undefined))).toEqual({ kind: 'program', names: [] });
    expect(parseAnnotation(block(undefined, ['postgres']))).toEqual({ kind: 'postgres', names: [] });
  });

  it('every fence of a guide page names its language: ts/js for a program, text/sh/json/jsonl/http for what is not run; no other info word than postgres', () => {
    expect(units.filter((unit) => unit.blocks[0]!.startsWith(GUIDE)).length).toBeGreaterThan(30);
    expect(badFences).toEqual([]);
    // The rule can fail: a bare fence, an unknown language and an unknown info word are caught.
    const folder = join(outDir, 'guide-canary');
    mkdirSync(join(folder, GUIDE), { recursive: true });
    const page = `${GUIDE}canary.md`;
    writeFileSync(join(folder, page), ['# c', '```', 'a diagram', '```', '```python', 'print(1)', '```', '```ts slow', 'export {};', '```', '```text', 'ok', '```'].join('\n'));
    expect(blocksOfIn(folder, page).badFences).toEqual([
      `${page}:2: fence language "" (a program is ts or js; what is not one is text, sh, json, jsonl, http)`,
      `${page}:5: fence language "python" (a program is ts or js; what is not one is text, sh, json, jsonl, http)`,
      `${page}:8: fence info "slow" (the one word known after ts/js is "postgres")`,
    ]);
  });

  it('contract ids in a guide page are links to the section of docs/contract.md that holds their row, never bare text', () => {
    const problems = pages().filter((file) => file.startsWith(GUIDE)).flatMap((file) => contractIdProblems(file, readFileSync(join(root, file), 'utf8')));
    expect(problems).toEqual([]);
    // The check can fail: a bare id, a link to the wrong section and an id contract.md lacks.
    expect(contractIdProblems('x.md', 'Results keep call order (O2).\n\n[A3](../contract.md#events-and-their-order-o) and [O99](../contract.md#events-and-their-order-o).\n')).toEqual([
      'x.md:1: "O2" is a contract id written as text: link it, [O2](../contract.md#events-and-their-order-o)',
      'x.md:3: [A3] links to #events-and-their-order-o, but its row is in #cancellation-and-time-a',
      'x.md:3: [O99] names no row of docs/contract.md',
    ]);
  });

  it('the compiler options are valid, and a type error in a block is reported at its line in the page', () => {
    expect(diagnostics.get('(compiler options)')).toBeUndefined();
    expect(diagnostics.get(CANARY.label)).toEqual([expect.stringMatching(/^canary\.md:11: Type 'string' is not assignable to type 'readonly Tool<.*>\[\]'\.$/)]);
  });

  it.each(units.map((unit) => [unit.label, unit] as const))('%s typechecks', (_label, unit) => {
    expect(diagnostics.get(unit.label), `${unit.blocks.join(', ')} (${unit.kind})`).toEqual([]);
  });
});

describe('excerpts: blocks quoted from the repository', () => {
  it('an excerpt matches its file\'s lines in order, with `// …` for lines left out, and nothing else', () => {
    const file = ['a', 'b', 'c', 'd'].join('\n');
    expect(excerptMatches('b\nc', file)).toBe(true);
    expect(excerptMatches('a\n// …\nd', file)).toBe(true);
    expect(excerptMatches('a\nc', file)).toBe(false);
    expect(excerptMatches('c\nb', file)).toBe(false);
    expect(excerptMatches('b\n// …', file)).toBe(false); // a gap must be followed by a quoted line
  });

  it.each(excerpts.map((excerpt) => [`${excerpt.where} (${excerpt.path})`, excerpt] as const))('%s is in its file, which tsconfig.json typechecks', (_label, excerpt) => {
    const path = join(root, excerpt.path);
    expect(relative(root, path).startsWith('..'), `${excerpt.where}: ${excerpt.path} is outside the repository`).toBe(false);
    expect(projectConfig().fileNames.map((name) => relative(root, name).split('\\').join('/'))).toContain(excerpt.path);
    expect(excerptMatches(excerpt.code, readFileSync(path, 'utf8')), `${excerpt.where} is not a quote of ${excerpt.path}`).toBe(true);
  });
});

describe('the programs of the docs run offline', () => {
  const programs = units.filter((unit) => unit.kind === 'program');
  let output: string[] = [];

  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('every label with expected output is a program of the docs', () => {
    const run = units.filter((unit) => unit.kind === 'program' || unit.kind === 'postgres').map((unit) => unit.label);
    for (const label of Object.keys(EXPECTED_OUTPUT)) expect(run).toContain(label);
  });

  it.each(programs.map((unit) => [unit.label, unit] as const))(
    '%s runs',
    async (_label, unit) => {
      output = [];
      const capture = (...args: unknown[]) => void output.push(args.map((arg) => (typeof arg === 'string' ? arg : JSON.stringify(arg))).join(' '));
      for (const method of ['log', 'info', 'warn', 'error'] as const) vi.spyOn(console, method).mockImplementation(capture);
      await import(pathToFileURL(runnableCopy(unit)).href);
      const printed = output.join('\n');
      for (const pattern of EXPECTED_OUTPUT[unit.label] ?? []) expect(printed, `${unit.label} printed:\n${printed}`).toMatch(pattern);
    },
    RUN_TIMEOUT_MS,
  );
});

describe('the programs of the docs that need PostgreSQL run, each in its own process', () => {
  const programs = units.filter((unit) => unit.kind === 'postgres');
  let postgres: PostgresServer | undefined;

  beforeAll(async () => {
    if (programs.length > 0) postgres = await startPostgres();
  }, 120_000);
  afterAll(async () => {
    await postgres?.stop();
  });

  it('the guide has at least one', () => {
    expect(programs.length).toBeGreaterThan(0);
  });

  it.each(programs.map((unit, i) => [unit.label, unit, i] as const))(
    '%s runs',
    async (_label, unit, i) => {
      // The program's own process: DBOS is one per process, and the program ends it itself.
      const env = { ...process.env, DBOS_SYSTEM_DATABASE_URL: postgres!.databaseUrl(`toolrun_docs_${i}`) };
      const child = spawn(process.execPath, ['--import', 'tsx', runnableCopy(unit)], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let printed = '';
      child.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
      child.stderr.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
      const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
      const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
        child.once('error', reject);
        child.once('close', (exitCode, exitSignal) => resolve([exitCode, exitSignal]));
      }).finally(() => clearTimeout(timer));
      expect({ code, signal }, `${unit.label} printed:\n${printed}`).toEqual({ code: 0, signal: null });
      for (const pattern of EXPECTED_OUTPUT[unit.label] ?? []) expect(printed, `${unit.label} printed:\n${printed}`).toMatch(pattern);
    },
    RUN_TIMEOUT_MS + 10_000,
  );
});

/** Contract ids as the rows of docs/contract.md have them, with the slug of the section each is in. */
function contractSections(): Map<string, string> {
  const sections = new Map<string, string>();
  let slug = '';
  for (const line of readFileSync(join(root, 'docs/contract.md'), 'utf8').split('\n')) {
    const heading = /^##\s+(.*)$/.exec(line);
    // GitHub's slug (what remark-validate-links checks): lower case, punctuation but - and _ dropped, spaces to -.
    if (heading !== null) slug = heading[1]!.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const row = /^\| ([A-Z]\d+) \|/.exec(line);
    if (row !== null) sections.set(row[1]!, slug);
  }
  return sections;
}

/** What is wrong with the contract ids of one page: bare ids in its prose, links to the wrong section, ids with no row. */
function contractIdProblems(file: string, text: string): string[] {
  const sections = contractSections();
  const problems: string[] = [];
  let fence: string | undefined;
  text.split('\n').forEach((line, i) => {
    const where = `${file}:${i + 1}`;
    const marker = /^(`{3,})/.exec(line)?.[1];
    if (fence !== undefined) {
      if (line.trim() === fence) fence = undefined;
      return;
    }
    if (marker !== undefined) return void (fence = marker);
    for (const link of line.matchAll(/\[([A-Z]\d+)\]\(\.\.\/contract\.md#([^)]*)\)/g)) {
      const section = sections.get(link[1]!);
      if (section === undefined) problems.push(`${where}: [${link[1]}] names no row of docs/contract.md`);
      else if (section !== link[2]) problems.push(`${where}: [${link[1]}] links to #${link[2]}, but its row is in #${section}`);
    }
    // What is left once links and code spans are taken out must hold no id of the contract.
    const prose = line.replace(/\[[^\]]*\]\([^)]*\)/g, ' ').replace(/`[^`]*`/g, ' ');
    for (const bare of prose.matchAll(/\b([A-Z]\d+)\b/g)) {
      const section = sections.get(bare[1]!);
      if (section !== undefined) problems.push(`${where}: "${bare[1]}" is a contract id written as text: link it, [${bare[1]}](../contract.md#${section})`);
    }
  });
  return problems;
}

/**
 * Whether every line of `excerpt` is a line of `file`, in the same order and consecutive,
 * except that a line `// …` stands for one or more lines left out (between two quoted lines).
 */
function excerptMatches(excerpt: string, file: string): boolean {
  const lines = excerpt.split('\n');
  const gap = (line: string) => line.trim() === '// …';
  if (gap(lines[0]!) || gap(lines.at(-1)!)) return false;
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const pattern = lines.map((line) => (gap(line) ? '(?:[^\\n]*\\n)+' : `${escape(line)}\\n`)).join('');
  return new RegExp(`^${pattern}`, 'm').test(`${file}\n`);
}

/** One diagnostic as `page:line: message`, at the line of the docs it comes from. */
function describeDiagnostic(unit: Unit, file: ts.SourceFile, diagnostic: ts.Diagnostic): string {
  const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
  if (diagnostic.start === undefined) return message;
  const { line } = file.getLineAndCharacterOfPosition(diagnostic.start);
  const origin = unit.origins[line];
  return origin === undefined ? `(prelude of ${unit.label}) ${message}` : `${origin.file}:${origin.line}: ${message}`;
}

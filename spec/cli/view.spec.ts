import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import stripAnsi from 'strip-ansi';
import { FakeStream, screen } from './support.ts';
import type { CallOutcome } from '../../lib/core/tool/tool.ts';
import type { ToolEvent } from '../../lib/core/run/events.ts';
import type { ToolCall } from '../../lib/core/tool/tool.ts';
import { createRunView } from '../../lib/cli/view/index.ts';
import { finishedLine } from '../../lib/cli/view/lines.ts';
import { displayedProgress, progressBar } from '../../lib/cli/view/calls.ts';
import { promptText } from '../../lib/cli/approval-prompt.ts';
import { argsSummary, oneLine, terminalSafe, truncateWidth } from '../../lib/cli/text.ts';


const calls: ToolCall[] = [
  { id: 'call_a', name: 'read_file', arguments: { path: 'package.json' } },
  { id: 'call_b', name: 'shell', arguments: { command: 'for i in 1 2 3; do echo step $i; done' } },
  { id: 'call_c', name: 'grep', arguments: { pattern: '(' } },
];

const start = (index: number): ToolEvent => {
  const call = calls[index]!;
  return { type: 'tool_execution_start', toolCallId: call.id, toolName: call.name, index, args: call.arguments };
};
const update = (index: number, progress: unknown): ToolEvent => {
  const call = calls[index]!;
  return { type: 'tool_execution_update', toolCallId: call.id, toolName: call.name, index, progress };
};
const end = (index: number, text: string, outcome: CallOutcome): ToolEvent => {
  const call = calls[index]!;
  const isError = outcome !== 'ok';
  return {
    type: 'tool_execution_end',
    toolCallId: call.id,
    toolName: call.name,
    index,
    result: { content: [{ type: 'text', text }] },
    isError,
    outcome,
    startedAt: 0,
    endedAt: 0,
  };
};
const result = (index: number, text: string, isError: boolean): ToolEvent => {
  const call = calls[index]!;
  return {
    type: 'tool_result',
    toolCallId: call.id,
    toolName: call.name,
    index,
    message: { role: 'tool', toolCallId: call.id, toolName: call.name, content: [{ type: 'text', text }], isError },
  };
};

/**
 * A run where calls end in the order c, a, b (completion order) while results come a, b, c
 * (call order); b streams shell output split mid-line; c fails; b is interrupted.
 */
function playRun(view: ReturnType<typeof createRunView>, clock: { t: number }, advance: (ms: number) => void): void {
  view.begin('synthetic run', calls);
  view.event(start(0));
  view.event(start(1));
  view.event(start(2));
  advance(5);
  view.event(update(1, { stream: 'stdout', text: 'step 1\nste' }));
  view.event(update(1, { stream: 'stdout', text: 'p 2\n' }));
  view.event(update(0, { bytesRead: 512 }));
  view.event(update(1, '\x1b[31mred text\x1b[0m'));
  advance(5);
  view.event(end(2, 'invalid regular expression: (\nat position 0', 'error'));
  advance(10);
  view.event(end(0, '{\n  "name": "toolrun"\n}', 'ok'));
  view.event(result(0, '{\n  "name": "toolrun"\n}', false));
  advance(100);
  view.event(update(1, { stream: 'stdout', text: 'step 3' }));
  view.event(end(1, 'interrupted: the run was aborted after 120 ms', 'interrupted'));
  view.event(result(1, 'interrupted: the run was aborted after 120 ms', true));
  view.event(result(2, 'invalid regular expression: (\nat position 0', true));
  void clock;
}

describe('createRunView, plain mode (not a TTY)', () => {
  it('prints one line per event worth seeing, with no ANSI escapes', () => {
    const stream = new FakeStream();
    const clock = { t: 0 };
    const view = createRunView({ stream, tty: false, now: () => clock.t });
    playRun(view, clock, (ms) => (clock.t += ms));
    view.end('3 results');
    view.close();

    expect(stream.output).not.toContain('\x1b[');
    const lines = stream.output.trimEnd().split('\n');
    expect(lines).toEqual([
      'run synthetic run (3 calls)',
      'start call_a read_file {"path":"package.json"}',
      'start call_b shell {"command":"for i in 1 2 3; do echo step $i; done"}',
      'start call_c grep {"pattern":"("}',
      '  call_b | step 1',
      '  call_b | step 2',
      '  call_a | {"bytesRead":512}',
      '  call_b | red text',
      'end call_c error 10ms: invalid regular expression: ( (+1 line)',
      'end call_a ok 20ms: } (+2 lines)',
      '  call_b | step 3',
      'end call_b error 120ms (interrupted): interrupted: the run was aborted after 120 ms',
      'results (call order):',
      '  call_a ok } (+2 lines)',
      '  call_b error interrupted: the run was aborted after 120 ms',
      '  call_c error invalid regular expression: ( (+1 line)',
      '3 results',
    ]);
  });

  it('prints results in call order even when they are missing or ids repeat', () => {
    const stream = new FakeStream();
    const view = createRunView({ stream, tty: false, now: () => 0 });
    const same: ToolCall[] = [
      { id: 'dup', name: 'a', arguments: {} },
      { id: 'dup', name: 'b', arguments: {} },
    ];
    view.begin('dups', same);
    view.event({ type: 'tool_execution_start', toolCallId: 'dup', toolName: 'b', index: 1, args: {} });
    view.event({ type: 'tool_execution_start', toolCallId: 'dup', toolName: 'a', index: 0, args: {} });
    view.event({
      type: 'tool_result',
      toolCallId: 'dup',
      toolName: 'a',
      index: 0,
      message: { role: 'tool', toolCallId: 'dup', toolName: 'a', content: [{ type: 'text', text: 'first' }], isError: false },
    });
    view.end();
    const out = stream.output;
    expect(out.indexOf('start dup b')).toBeLessThan(out.indexOf('start dup a'));
    expect(out).toContain('results (call order):\n  dup ok first\n  dup missing (no result message)\n');
  });

  it('caps progress lines per call and says how many it skipped', () => {
    const stream = new FakeStream();
    const view = createRunView({ stream, tty: false, now: () => 0, maxProgressLinesPerCall: 2 });
    view.begin('flood', calls.slice(0, 1));
    view.event(start(0));
    for (let i = 1; i <= 5; i++) view.event(update(0, `line ${i}`));
    view.event(end(0, 'done', 'ok'));
    view.end();
    expect(stream.output).toContain('  call_a | line 1\n  call_a | line 2\n  call_a | … 3 more progress lines not shown\nend call_a ok 0ms: done\n');
    expect(stream.output).not.toContain('line 3');
  });

  it('holds no timer', () => {
    vi.useFakeTimers();
    try {
      const view = createRunView({ stream: new FakeStream(), tty: false });
      view.begin('t', calls);
      view.event(start(0));
      expect(vi.getTimerCount()).toBe(0);
      view.close();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('createRunView, TTY mode', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('draws call lines with a spinner, then the outcome, then the results in call order', () => {
    const stream = new FakeStream();
    const clock = { t: 0 };
    const view = createRunView({ stream, tty: true, now: () => clock.t });
    let spinnerSeen = false;
    playRun(view, clock, (ms) => {
      clock.t += ms;
      vi.advanceTimersByTime(ms);
      // While calls run, the spinner timer ticks and the footer shows the counts.
      if (/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] /.test(stripAnsi(stream.output))) spinnerSeen = true;
    });
    expect(spinnerSeen).toBe(true);
    const live = stripAnsi(stream.output);
    expect(live).toMatch(/running · \d\/3 done/);
    // Progress is drawn by the spinner tick (the latest value at that moment), sanitized.
    expect(live).toMatch(/shell +for i in 1 2 3; do echo step … +0\.0s red text/);
    expect(stream.output).not.toContain('\x1b[31mred text');

    const before = stream.output.length;
    view.end('all done');
    const text = stripAnsi(stream.output);
    // mark, name, a summary of the arguments, duration, the last line of the result (+ the others).
    expect(text).toMatch(/✓ read_file package\.json +20ms \} \(\+2 lines\)/);
    expect(text).toMatch(/✗ grep +\( +10ms invalid regular expression: \( \(\+1 line\)/);
    expect(text).toMatch(/✗ shell +for i in 1 2 3; do echo step … +120ms interrupted: the run was aborted/);
    const tail = stripAnsi(stream.output.slice(before));
    const a = tail.indexOf('call_a ok');
    const b = tail.indexOf('call_b error');
    const c = tail.indexOf('call_c error');
    expect(a).toBeGreaterThan(-1);
    expect(a).toBeLessThan(b);
    expect(b).toBeLessThan(c);
    expect(tail.trimEnd().endsWith('all done')).toBe(true);

    view.close();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('runs its spinner timer only while calls run, and close() stops it mid-run', () => {
    const stream = new FakeStream();
    const view = createRunView({ stream, tty: true, now: () => 0 });
    view.begin('t', calls);
    expect(vi.getTimerCount()).toBe(0);
    view.event(start(0));
    expect(vi.getTimerCount()).toBe(1);
    const drawn = stream.output.length;
    vi.advanceTimersByTime(80 * 3);
    expect(stream.output.length).toBeGreaterThan(drawn);
    view.close();
    expect(vi.getTimerCount()).toBe(0);
    // Nothing is written after close().
    const closed = stream.output.length;
    view.event(end(0, 'late', 'ok'));
    view.line('late');
    vi.advanceTimersByTime(1000);
    expect(stream.output.length).toBe(closed);
  });

  it('persists the whole final frame, even when it is taller than the terminal', () => {
    // A 6-row terminal and 10 calls: the frame is taller than the terminal at a tenth of the
    // CPU of 30 calls on the default 24 rows (each event redraws every row).
    const stream = new FakeStream();
    stream.rows = 6;
    const many: ToolCall[] = Array.from({ length: 10 }, (_, i) => ({ id: `c${i}`, name: `tool_${i}`, arguments: {} }));
    const view = createRunView({ stream, tty: true, now: () => 0 });
    view.begin('tall', many);
    many.forEach((call, index) => view.event({ type: 'tool_execution_start', toolCallId: call.id, toolName: call.name, index, args: {} }));
    many.forEach((call, index) =>
      view.event({
        type: 'tool_execution_end',
        toolCallId: call.id,
        toolName: call.name,
        index,
        result: { content: [{ type: 'text', text: `result ${index}` }] },
        isError: false,
        outcome: 'ok',
        startedAt: 0,
        endedAt: 0,
      }),
    );
    const before = stream.output.length;
    view.end();
    view.close();
    const final = stripAnsi(stream.output.slice(before));
    for (let i = 0; i < 10; i++) expect(final).toMatch(new RegExp(`✓ tool_${i} +0ms result ${i}\n`));
  });

  it('names an outcome other than ok/error next to the result text', () => {
    const stream = new FakeStream();
    const view = createRunView({ stream, tty: true, now: () => 0 });
    view.begin('t', calls.slice(0, 1));
    view.event(start(0));
    view.event(end(0, 'Tool "read_file" timed out after 50 ms and was stopped.', 'timed_out'));
    view.end();
    view.close();
    expect(stripAnsi(stream.output)).toMatch(/✗ read_file package\.json +0ms timed out · Tool "read_file" timed out after 50 ms/);
  });

  it('keeps every line within the terminal width', () => {
    const stream = new FakeStream();
    stream.columns = 40;
    const view = createRunView({ stream, tty: true, now: () => 0 });
    view.begin('a title far longer than forty columns, to be cut', calls.slice(0, 1));
    view.event(start(0));
    view.event(update(0, 'x'.repeat(500)));
    vi.advanceTimersByTime(80);
    view.event(end(0, '中文'.repeat(100), 'ok'));
    view.end();
    view.close();
    const widths = stripAnsi(stream.output)
      .split(/\n|\x1b\[\d*G/)
      .map((line) => [...line].reduce((w, ch) => w + (/[\u4e00-\u9fff]/.test(ch) ? 2 : 1), 0));
    expect(Math.max(...widths)).toBeLessThanOrEqual(40);
  });
});

describe('what a row shows', () => {
  it('a finished call shows its last line; a status note such as [exit code 0] follows the line before it', () => {
    expect(finishedLine(['step 1 of 5', 'step 2 of 5', 'finished', '[exit code 0]'], 'ok')).toBe('finished [exit code 0]');
    expect(finishedLine(['step 1 of 5', '[killed: the run was aborted]'], 'interrupted')).toBe('step 1 of 5 [killed: the run was aborted]');
    expect(finishedLine(['a', 'b'], 'ok')).toBe('b');
    // A failure shows its reason: the first line.
    expect(finishedLine(['Invalid arguments for grep:', '- pattern: expected string'], 'rejected')).toBe('Invalid arguments for grep:');
    expect(finishedLine([], 'ok')).toBe('');
  });

  it('the shell row of a TTY frame ends on "finished", not on the first step', () => {
    vi.useFakeTimers();
    try {
      const stream = new FakeStream();
      const view = createRunView({ stream, tty: true, now: () => 0 });
      view.begin('t', calls.slice(1, 2));
      view.event({ type: 'tool_execution_start', toolCallId: 'call_b', toolName: 'shell', index: 0, args: {} });
      view.event({ type: 'tool_execution_end', toolCallId: 'call_b', toolName: 'shell', index: 0, result: { content: [{ type: 'text', text: 'step 1\nstep 2\nfinished\n[exit code 0]' }] }, isError: false, outcome: 'ok', startedAt: 0, endedAt: 0 });
      view.end();
      view.close();
      expect(stripAnsi(stream.output)).toMatch(/✓ shell .* 0ms finished \[exit code 0\] \(\+3 lines\)/);
    } finally {
      vi.useRealTimers();
    }
  });

  it('OpenAI Chat arguments (a JSON text) are shown parsed, not double-encoded', () => {
    const stream = new FakeStream();
    const view = createRunView({ stream, tty: false, now: () => 0 });
    view.begin('openai', [{ id: 'call_1', name: 'get_weather', arguments: '{"location": "Paris"}' }]);
    view.event({ type: 'tool_execution_start', toolCallId: 'call_1', toolName: 'get_weather', index: 0, args: '{"location": "Paris"}' });
    view.close();
    expect(stream.output).toContain('start call_1 get_weather {"location":"Paris"}\n');
    expect(argsSummary('{"location": "Paris", "unit": "c"}')).toBe('Paris c');
    // A string that is not JSON stays as it is.
    expect(argsSummary('{not json')).toBe('{not json');
  });

  it('counts are in the right number: 1 line, 2 lines', () => {
    const stream = new FakeStream();
    const view = createRunView({ stream, tty: false, now: () => 0 });
    view.begin('one', calls.slice(0, 1));
    view.event(start(0));
    view.event(end(0, 'a\nb', 'ok'));
    view.event(result(0, 'a\nb', false));
    view.end();
    expect(stream.output).toContain('run one (1 call)\n');
    expect(stream.output).toContain('end call_a ok 0ms: b (+1 line)\n');
    expect(stream.output).toContain('  call_a ok b (+1 line)\n');
  });
});

describe('control characters are escaped in one place (lib/cli/text.ts), the same everywhere', () => {
  // A lone ESC (not starting a sequence) and DEL among other controls.
  const hostile = 'a\x7fb\x00e\x07f\rg\x1b';

  it('terminalSafe: ANSI sequences removed; every other C0, C1 control and DEL written as a visible escape', () => {
    expect(terminalSafe(hostile)).toBe('a\\x7fb\\x00e\\x07f\\rg\\x1b');
    // C1 controls and complete sequences (ESC c, CSI as 0x9b) are removed with the ANSI codes.
    expect(terminalSafe('x\x9b2Jy\x1bcz')).toBe('xyz');
    expect(terminalSafe('\x1b[31mred\x1b[0m \x1b]0;title\x07ok')).toBe('red ok');
    expect(terminalSafe('a\tb')).toBe('a  b');
    expect(oneLine('one\n  two\r\nthree')).toBe('one two three');
  });

  it('plain and TTY output carry none of them raw: ids, names, arguments, progress, results, titles, lines', () => {
    const raw = /[\x00-\x09\x0b-\x1a\x1c-\x1f\x7f-\x9f]/;
    for (const tty of [false, true]) {
      const stream = new FakeStream();
      const view = createRunView({ stream, tty, now: () => 0 });
      const call: ToolCall = { id: `id${hostile}`, name: `name${hostile}`, arguments: { path: hostile } };
      view.line(`line ${hostile}`);
      view.begin(`title ${hostile}`, [call]);
      view.event({ type: 'tool_execution_start', toolCallId: call.id, toolName: call.name, index: 0, args: call.arguments });
      view.event({ type: 'tool_execution_update', toolCallId: call.id, toolName: call.name, index: 0, progress: `progress ${hostile}` });
      view.event({ type: 'tool_execution_end', toolCallId: call.id, toolName: call.name, index: 0, result: { content: [{ type: 'text', text: hostile }] }, isError: true, outcome: 'error', startedAt: 0, endedAt: 0 });
      view.event({ type: 'tool_result', toolCallId: call.id, toolName: call.name, index: 0, message: { role: 'tool', toolCallId: call.id, toolName: call.name, content: [{ type: 'text', text: hostile }], isError: true } });
      view.end(`summary ${hostile}`);
      view.close();
      // ESC only as the start of the view's own styles and cursor moves (TTY), never from the data.
      expect(stream.output.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, ''), `tty: ${tty}`).not.toMatch(raw);
      expect(stream.output.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '')).not.toContain('\x1b');
      expect(stream.output).toContain('\\x7f');
    }
  });

  it('truncateWidth counts wide characters as two columns and never cuts one in half', () => {
    expect(truncateWidth('日本語abc', 4)).toBe('日…');
    expect(truncateWidth('abc', 3)).toBe('abc');
    expect(truncateWidth('\x1b[31mabcdef\x1b[39m', 4)).toBe('\x1b[31mabc\x1b[39m…');
  });
});

describe('a call waiting for approval (H3)', () => {
  const request = (index: number, reason?: string): ToolEvent => {
    const call = calls[index]!;
    return {
      type: 'tool_approval_request',
      toolCallId: call.id,
      toolName: call.name,
      index,
      request: { approvalId: `approval-${index}`, toolCallId: call.id, toolName: call.name, index, input: call.arguments, source: reason === undefined ? 'tool' : 'hook', ...(reason === undefined ? {} : { reason }) },
    };
  };

  it('plain: one line says the call waits and why; the results list it as pending; earlier results are listed as such', () => {
    const stream = new FakeStream();
    const view = createRunView({ stream, tty: false, now: () => 0 });
    view.begin('resumed', calls, new Map([[0, { role: 'tool', toolCallId: 'call_a', toolName: 'read_file', content: [{ type: 'text', text: '{}' }], isError: false }]]));
    view.event(start(1));
    view.event(request(1, 'runs a \x1b[31mcommand\x1b[0m'));
    view.event(start(2));
    view.event(end(2, 'no match', 'ok'));
    view.event(result(2, 'no match', false));
    view.end('paused');
    view.close();
    expect(stream.output).toContain('earlier call_a ok (before the pause): {}\n');
    expect(stream.output).toContain('approval call_b shell: waits for approval: runs a command\n');
    expect(stream.output).toMatch(/^ {2}call_a ok \{\}$/m);
    expect(stream.output).toMatch(/^ {2}call_b pending waits for approval: runs a command$/m);
  });

  it('TTY: the row shows ? and the reason instead of a spinner, the footer counts it, the prompt is drawn under the frame and cleared', () => {
    const stream = new FakeStream();
    stream.columns = 120;
    const view = createRunView({ stream, tty: true, now: () => 0 });
    view.begin('run', calls);
    view.event(start(0));
    view.approval?.(1, 'writes a file', true);
    view.prompt?.('approve? y yes · n no');
    let out = stripAnsi(stream.output);
    expect(out).toMatch(/^\? shell +.* waits for approval: writes a file$/m);
    expect(out).toContain('1 running · 0/3 done · 1 waiting for approval · 1 waiting');
    expect(out).toContain('approve? y yes · n no');
    view.approval?.(1, undefined, false);
    view.prompt?.(undefined);
    const before = stream.output.length;
    view.event(start(1));
    out = stripAnsi(stream.output.slice(before));
    expect(out).not.toContain('waits for approval');
    expect(out).not.toContain('approve?');
    view.close();
  });
});

/**
 * Approval glitches of the live view, each seen in a real terminal (`npm start` in tmux) and
 * reproduced here first: each spec failed before its fix, in the way its comment says.
 */
describe('the live view around approvals and interrupts', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** What the terminal shows now (the live frame under anything written before it). */
  const lastFrame = (output: string): string => screen(output).join('\n').trimEnd();

  it('a call asked about before its start event reached the view shows ?, no spinner and no clock, and is counted as waiting for approval, not running', () => {
    // Before the fix, the start event cleared the approval: the row got a spinner and a
    // ticking clock, and the footer said "2 running · 0/3 done · 1 waiting".
    const stream = new FakeStream();
    stream.columns = 120;
    const clock = { t: 0 };
    const view = createRunView({ stream, tty: true, now: () => clock.t });
    view.begin('run', calls);
    view.event(start(0));
    // The run prepares call 1 and asks (the prompt draws the row) before the consumer took its start event.
    view.approval?.(1, 'writes a file', true);
    view.event(start(1));
    clock.t += 1500;
    vi.advanceTimersByTime(80 * 20);
    const frame = lastFrame(stream.output);
    expect(frame).toMatch(/^\? shell +for i in 1 2 3; .*… +waits for approval: writes a file$/m);
    expect(frame).not.toMatch(/^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] shell/m);
    expect(frame).toContain('1 running · 0/3 done · 1 waiting for approval · 1 waiting');
    // Answered yes: it runs, and its clock starts at the answer, not at its start event.
    view.approval?.(1, undefined, false);
    clock.t += 200;
    vi.advanceTimersByTime(80);
    expect(lastFrame(stream.output)).toMatch(/^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] shell +for i in 1 2 3; .*… +0\.2s$/m);
    expect(lastFrame(stream.output)).toContain('2 running · 0/3 done · 1 waiting');
    view.close();
  });

  it("the results list shows a result by the same line as its call's end line", () => {
    // Before the fix the end line showed the last line ("finished [exit code 0]") and the
    // results list the first ("step 1"), so one call read two ways.
    const output = 'step 1\nstep 2\nfinished\n[exit code 0]';
    for (const tty of [false, true]) {
      const stream = new FakeStream();
      const view = createRunView({ stream, tty, now: () => 0 });
      view.begin('t', calls.slice(0, 2));
      view.event(start(0));
      view.event(end(0, output, 'ok'));
      view.event(result(0, output, false));
      view.event(start(1));
      view.event(end(1, 'Invalid arguments for shell:\n- command: expected string', 'rejected'));
      view.event(result(1, 'Invalid arguments for shell:\n- command: expected string', true));
      view.end();
      view.close();
      const out = stripAnsi(stream.output);
      expect(out, `tty: ${tty}`).toMatch(tty ? /✓ read_file .* 0ms finished \[exit code 0\] \(\+3 lines\)/ : /^end call_a ok 0ms: finished \[exit code 0\] \(\+3 lines\)$/m);
      expect(out, `tty: ${tty}`).toMatch(/^ {2}call_a ok finished \[exit code 0\] \(\+3 lines\)$/m);
      // A call that failed before doing anything shows its reason (the first line) in both.
      expect(out, `tty: ${tty}`).toMatch(/^ {2}call_b error Invalid arguments for shell: \(\+1 line\)$/m);
    }
  });

  it('plain: the header gives the number of calls once ("6 parallel tool calls …", not also "(6 calls)")', () => {
    // Before the fix: "run demo: 6 parallel tool calls from one assistant message … (6 calls)".
    const six: ToolCall[] = Array.from({ length: 6 }, (_, i) => ({ id: `c${i}`, name: 'read_file', arguments: {} }));
    const lines = (title: string, list: readonly ToolCall[]): string => {
      const stream = new FakeStream();
      const view = createRunView({ stream, tty: false, now: () => 0 });
      view.begin(title, list);
      view.close();
      return stream.output.split('\n')[0]!;
    };
    expect(lines('demo: 6 parallel tool calls from one assistant message, in /tmp/x', six)).toBe('run demo: 6 parallel tool calls from one assistant message, in /tmp/x');
    expect(lines('mcp: 6 parallel calls (calls from c.json) to srv', six)).toBe('run mcp: 6 parallel calls (calls from c.json) to srv');
    // A title without the count gets it; one that names another number of calls too.
    expect(lines('parent agent, turn 1', six.slice(0, 1))).toBe('run parent agent, turn 1 (1 call)');
    expect(lines('batch of 3 calls', six)).toBe('run batch of 3 calls (6 calls)');
  });

  it('at 60 columns the approval prompt still names the call and every key', () => {
    // Before the fix the prompt began "approve? y yes · n no · l later (save the state to a
    // file and exit) — shell …": at 60 columns it was cut before it named the call.
    const stream = new FakeStream();
    stream.columns = 60;
    const view = createRunView({ stream, tty: true, now: () => 0 });
    view.begin('demo', calls);
    view.approval?.(1, 'this shell command writes a file in the project', true);
    view.prompt?.(promptText({ toolName: 'shell', input: { command: 'grep -rn TODO src > TODO.md; wc -l < TODO.md | xargs printf "%s TODOs\n"' } }));
    const prompt = lastFrame(stream.output).trimEnd().split('\n').at(-1)!;
    expect(prompt).toMatch(/^approve shell\? y yes · n no · l later/);
    expect([...prompt].length).toBeLessThanOrEqual(60);
    view.close();
  });

  it('a notice (Ctrl+C) given before the run began is shown with the run, under its title, never above it', () => {
    // Before the fix the program printed the notice as a line before the command drew its
    // first frame, so it sat above the run's title.
    for (const tty of [false, true]) {
      const stream = new FakeStream();
      const view = createRunView({ stream, tty, now: () => 0 });
      view.notice?.('Ctrl+C: aborting the run');
      expect(stream.output, `tty: ${tty}`).toBe('');
      view.begin('demo: 3 parallel tool calls', calls);
      const out = stripAnsi(stream.output);
      expect(out.indexOf('demo: 3 parallel tool calls'), `tty: ${tty}`).toBeGreaterThanOrEqual(0);
      expect(out.indexOf('Ctrl+C: aborting the run'), `tty: ${tty}`).toBeGreaterThan(out.indexOf('demo: 3 parallel tool calls'));
      view.close();
    }
    // Mid-run on a TTY: under the frame (below the footer), not above the title.
    const stream = new FakeStream();
    const view = createRunView({ stream, tty: true, now: () => 0 });
    view.begin('demo', calls);
    view.event(start(0));
    view.notice?.('Ctrl+C: aborting the run');
    const frame = lastFrame(stream.output).trimEnd().split('\n');
    expect(frame[0]).toBe('demo');
    expect(frame.at(-1)).toBe('Ctrl+C: aborting the run');
    view.close();
  });
});

describe('MCP progress is drawn like native progress', () => {
  it('displayedProgress: the message as text, progress/total as a bar, a toolrun shell chunk sent as JSON text as its chunk', () => {
    expect(progressBar(1, 4)).toBe('[██▌░░░░░░░] 1/4');
    expect(progressBar(4, 4)).toBe('[██████████] 4/4');
    expect(progressBar(9, 4)).toBe('[██████████] 9/4');
    expect(progressBar(1, 0)).toBe('');
    expect(displayedProgress({ progress: 2, total: 4, message: 'copying' })).toBe('[█████░░░░░] 2/4 copying');
    expect(displayedProgress({ progress: 2, total: 4 })).toBe('[█████░░░░░] 2/4');
    expect(displayedProgress({ progress: 3, message: 'reading a.txt' })).toBe('reading a.txt');
    expect(displayedProgress({ progress: 3 })).toBe('3');
    expect(displayedProgress({ progress: 1, message: '{"stream":"stdout","text":"step 1\\nste"}' })).toEqual({ stream: 'stdout', text: 'step 1\nste' });
    // Not an MCP payload (another key, a non-numeric progress): left as it is.
    expect(displayedProgress({ progress: 1, bytes: 5 })).toEqual({ progress: 1, bytes: 5 });
    expect(displayedProgress({ progress: '1' })).toEqual({ progress: '1' });
    expect(displayedProgress('text')).toBe('text');
  });

  it('plain and TTY: no raw JSON of MCP payloads; a served shell chunk split mid-line is joined', () => {
    // Before: `  call_b | {"progress":1,"message":"{\"stream\":\"stdout\",…` and `{"progress":1,"total":4}`.
    const mcp = [
      { progress: 1, message: JSON.stringify({ stream: 'stdout', text: 'step 1\nste' }) },
      { progress: 2, message: JSON.stringify({ stream: 'stdout', text: 'p 2\n' }) },
    ];
    const plain = new FakeStream();
    const view = createRunView({ stream: plain, tty: false, now: () => 0 });
    view.begin('mcp', calls);
    view.event(start(0));
    view.event(start(1));
    view.event(update(0, { progress: 1, total: 4 }));
    for (const payload of mcp) view.event(update(1, payload));
    view.close();
    expect(plain.output).toContain('  call_a | [██▌░░░░░░░] 1/4\n');
    expect(plain.output).toContain('  call_b | step 1\n  call_b | step 2\n');
    expect(plain.output).not.toContain('"progress"');

    vi.useFakeTimers();
    try {
      const stream = new FakeStream();
      const tty = createRunView({ stream, tty: true, now: () => 0 });
      tty.begin('mcp', calls);
      tty.event(start(0));
      tty.event(update(0, { progress: 3, total: 4, message: 'almost' }));
      vi.advanceTimersByTime(80);
      expect(stripAnsi(stream.output)).toMatch(/read_file +package\.json +0\.0s \[███████▌░░\] 3\/4 almost/);
      tty.close();
    } finally {
      vi.useRealTimers();
    }
  });
});

/** A durable run's replayed calls (contract J4: `replayed: true` on `tool_execution_end`), as `toolrun durable` draws them. */
describe('replayed calls are marked', () => {
  const replayedEnd = (index: number, text: string): ToolEvent => ({ ...(end(index, text, 'ok') as Extract<ToolEvent, { type: 'tool_execution_end' }>), replayed: true });

  // Fails if the plain end line of a replayed call reads like one that ran (a duration, no mark).
  it('plain: a replayed call\'s end line says "replayed (from the journal, not run)" instead of a duration; a call that ran keeps its duration', () => {
    const stream = new FakeStream();
    const view = createRunView({ stream, tty: false, now: () => 0 });
    view.begin('attempt 2', calls);
    view.event(start(0));
    view.event(replayedEnd(0, '{}'));
    view.event(result(0, '{}', false));
    view.event(start(1));
    view.event(end(1, 'done', 'ok'));
    view.event(result(1, 'done', false));
    view.end();
    view.close();
    expect(stream.output).toContain('end call_a ok replayed (from the journal, not run): {}\n');
    expect(stream.output).toContain('end call_b ok 0ms: done\n');
    expect(stream.output).not.toMatch(/end call_b .*replayed/);
  });

  // Fails if the live frame draws a replayed call like one that ran (✓ and a duration), or the footer does not count it.
  it('TTY: the row shows ↺ and "replayed" in the time column; the footer counts the replayed calls', () => {
    vi.useFakeTimers();
    try {
      const stream = new FakeStream();
      stream.columns = 120;
      const view = createRunView({ stream, tty: true, now: () => 0 });
      view.begin('attempt 2', calls);
      view.event(start(0));
      view.event(replayedEnd(0, '{}'));
      view.event(start(2));
      view.event(end(2, 'no match', 'ok'));
      view.event(start(1));
      const live = stripAnsi(screen(stream.output).join('\n'));
      expect(live).toMatch(/^↺ read_file +package\.json +replayed \{\}$/m);
      expect(live).toMatch(/^✓ grep .* 0ms no match$/m);
      expect(live).toContain('1 running · 2/3 done · 1 replayed');
      view.close();
    } finally {
      vi.useRealTimers();
    }
  });
});

/**
 * `npm run lint:history` from the fast suite: what users read — lib/, docs/, README.md,
 * examples/ and the spec titles a test report shows — carries no issue, round or
 * pull-request number, branch name or dated history (docs/adr/0030-suite-and-checks.md).
 * The rules are scripts/lint-history.mjs's; this spec runs them in process and checks that
 * each still fires on planted text and stays silent on its look-alikes.
 */
import { describe, expect, it } from 'vitest';
import { findHistory, historyIn, plantedCheck, specTitles } from '../scripts/lint-history.mjs';

describe('lib/, docs/, README.md, examples/ and spec titles carry no history', () => {
  it('no line of lib/, docs/, README.md or examples/, and no spec title, names an issue, round, pull request, branch or date', () => {
    const found = findHistory(process.cwd()).map((f) => `${f.file}:${f.line}: ${f.rule}: ${f.text}`);
    expect(found).toEqual([]);
  });

  it('each rule fires on its planted line and on none of the look-alikes (a round trip, a 404, J3, an ADR number, a protocol revision, an anchor, a colour)', () => {
    expect(plantedCheck()).toEqual({ missed: [], falsePositives: [] });
  });

  it('reads spec titles as written: wrappers, modifiers, template literals and escaped quotes', () => {
    // The calls are spelt through variables, so this file's own source has no such titles.
    const [d, i, s] = ['describe', 'it', 'itSandboxed'];
    const source = [
      `${d}('a (issue 7) title', () => {`,
      `  ${i}.each(modes)("it's \\"quoted\\" ($mode)", () => {});`,
      `  ${d}.skipIf(!ok)(\`sandbox\${note}\`, () => {});`,
      `  ${s}('round 2 of it', () => {});`,
      "  const item = 'item 3 is not a title';",
    ].join('\n');
    expect(specTitles(source)).toEqual([
      { line: 1, title: 'a (issue 7) title' },
      { line: 2, title: 'it\'s "quoted" ($mode)' },
      { line: 3, title: 'sandbox${note}' },
      { line: 4, title: 'round 2 of it' },
    ]);
    expect(historyIn('a (issue 7) title')?.rule).toBe('issue number');
    expect(historyIn('round 2 of it')?.rule).toBe('round number');
  });
});

// Runs the scenario in a page served with a strict Content-Security-Policy (no
// 'unsafe-eval'). Records every `securitypolicyviolation` event, runs the scenario, then a
// control: `new Function` here must throw and be reported, which shows that the page really
// is under the policy and that the detector sees violations.
//
// Chromium delivers violation events as later tasks, and reports identical violations
// (same directive, same blocked "eval") of one page only once: a library's eval attempt
// can arrive after the scenario ended, and can stand in for the control's own report. So
// each event is attributed by its source file, and the test waits for the first event
// after the control before it judges.
import { runScenario } from './scenario.js';

const violations = [];
const waiting = [];
document.addEventListener('securitypolicyviolation', (event) => {
  const file = event.sourceFile.slice(event.sourceFile.lastIndexOf('/') + 1);
  violations.push({ directive: event.effectiveDirective, blocked: event.blockedURI, file, line: event.lineNumber });
  for (const notify of waiting.splice(0)) notify();
});

async function main() {
  const { checks } = await runScenario();

  let refused;
  try {
    new Function('return 1')();
    refused = 'new Function ran';
  } catch (error) {
    refused = error instanceof EvalError ? 'EvalError' : String(error);
  }
  // The bound only matters when no report comes at all: then the check fails instead of the page hanging.
  if (violations.length === 0) await Promise.race([new Promise((resolve) => waiting.push(resolve)), new Promise((resolve) => setTimeout(resolve, 10_000))]);
  const fromControl = violations.filter((v) => v.file === 'host-browser.js');
  const fromLibrary = violations.filter((v) => v.file !== 'host-browser.js');
  checks.push({ name: 'CSP no violation by the package', ok: fromLibrary.length === 0, detail: JSON.stringify(fromLibrary) });
  checks.push({
    name: 'CSP control: new Function refused and reported',
    ok: refused === 'EvalError' && fromControl.length === 1 && fromControl[0].blocked === 'eval',
    detail: `${refused}; reported: ${JSON.stringify(violations)}`,
  });
  return { checks };
}

window.scenarioResult = main().catch((error) => ({ checks: [{ name: 'browser host', ok: false, detail: String(error && error.stack ? error.stack : error) }] }));

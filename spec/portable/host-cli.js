// Runs the scenario in a command-line runtime (Node, Deno, Bun) and prints one JSON line
// with the checks; the runner (run.mjs) turns it into the runtime's PASS/FAIL line.
import { runScenario } from './scenario.js';

const result = await runScenario();
console.log(`SCENARIO-RESULT ${JSON.stringify(result)}`);

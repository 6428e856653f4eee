/**
 * Whether the `shell` tool's OS sandbox (bubblewrap) starts on this machine, for the specs
 * that run sandboxed commands: where it cannot, they skip, and the first file of a worker to
 * import this module prints one line saying why and how to enable them. The sandbox's own
 * checks (spec/tools/shell-sandbox.spec.ts) still fail there: they are what proves it.
 */
import { it } from 'vitest';
import { shellSandboxStatus } from '../lib/tools/sandbox.ts';

const status = await shellSandboxStatus();

/** True when sandboxed commands can run here. */
export const sandboxAvailable = status.available;

/** '' where the sandbox starts; else a title suffix saying why the spec is skipped and how to run it. */
export const sandboxSkipNote = status.available ? '' : ` (skipped: the shell's sandbox cannot start here: ${status.reason}; install bubblewrap to run it)`;

/** `it` where the sandbox starts, `it.skip` elsewhere. */
export const itSandboxed = status.available ? it : it.skip;

if (!status.available) console.warn(`specs that run sandboxed shell commands are${sandboxSkipNote}`);

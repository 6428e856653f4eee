/**
 * toolrun/testing: helpers for tests, demos and replays. A minimal entry so the docs spec
 * can resolve `toolrun/testing`; the full version comes with the packaging work.
 *
 * @module
 */
export { scriptedModel } from './extras/agent.ts';

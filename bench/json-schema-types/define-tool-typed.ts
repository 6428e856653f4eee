/** toolrun's `defineTool` with the 30-property schema `as const`: `execute` typed by `FromSchema` (see run.mjs). */
import { defineTool } from '../../lib/core/schema/define-tool.ts';
import { schema30 } from './schema.ts';

export const tool = defineTool({
  name: 'big',
  input: schema30,
  execute: (input) => `${input.id} ${input.name} ${input.role} ${input.address.city} ${input.owner?.team?.slug ?? ''} ${input.points?.[0]?.lat ?? 0} ${input.labels?.['x'] ?? ''}`,
});

/** toolrun's `defineTool` with the same schema seen as a `JsonSchema` (no typing: `Record<string, unknown>`), the baseline (see run.mjs). */
import { defineTool } from '../../lib/core/schema/define-tool.ts';
import type { JsonSchema } from '../../lib/core/tool/content.ts';
import { schema30 } from './schema.ts';

const input: JsonSchema = schema30;

export const tool = defineTool({
  name: 'big',
  input,
  execute: (args) => `${String(args['id'])} ${String(args['name'])} ${String(args['role'])} ${String((args['address'] as { city: string }).city)}`,
});

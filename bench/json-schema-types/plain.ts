/** No typing: the input typed `Record<string, unknown>`, the baseline (see run.mjs). */
import { schema30 } from './schema.ts';

type Input = Record<string, unknown>;

export function use(input: Input): string {
  const address = input['address'] as { city: string };
  return `${String(input['id'])} ${String(input['name'])} ${String(input['role'])} ${address.city} ${String(schema30.type)}`;
}
export const sample: Input = { id: 'a', name: 'b', role: 'admin', path: '/', mode: 'read', address: { street: 's', city: 'c' }, points: [{ lat: 1, lng: 2 }] };

/** as-typed's `AsTyped` on the 30-property schema (see run.mjs). */
import type { AsTyped } from 'as-typed';
import { schema30 } from './schema.ts';

type Input = AsTyped<typeof schema30>;

export function use(input: Input): string {
  return `${input.id} ${input.name} ${input.role} ${input.address.city} ${input.owner?.team?.slug ?? ''} ${input.points?.[0]?.lat ?? 0} ${input.labels?.['x'] ?? ''}`;
}
export const sample: Input = { id: 'a', name: 'b', role: 'admin', path: '/', mode: 'read', address: { street: 's', city: 'c' }, points: [{ lat: 1, lng: 2 }] };

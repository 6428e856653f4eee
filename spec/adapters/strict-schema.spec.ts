/**
 * `lenientStrictSchema`: an OpenAI strict tool schema read as the SDK's own parser reads
 * arguments (docs/adr/0017-framework-adapters.md).
 */
import { describe, expect, it } from 'vitest';
import { lenientStrictSchema } from '../../lib/adapters/strict-schema.ts';
import { compileJsonSchema } from '../../lib/core/schema/json-schema-validator.ts';

const strict = {
  type: 'object',
  properties: {
    q: { type: 'string' },
    limit: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
    sort: { type: ['string', 'null'], enum: ['asc', 'desc', null] },
    filter: { $ref: '#/$defs/Filter' },
    tags: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, note: { type: ['string', 'null'] } }, required: ['name', 'note'], additionalProperties: false } },
  },
  required: ['q', 'limit', 'sort', 'filter', 'tags'],
  additionalProperties: false,
  $defs: { Filter: { anyOf: [{ type: 'object', properties: { lang: { type: 'string' } }, required: ['lang'], additionalProperties: false }, { type: 'null' }] } },
} as const;

describe('lenientStrictSchema', () => {
  it('P5 unknown keys pass at every level, nullable keys (also through a local $ref) may be absent; the rest is still checked', () => {
    const before = JSON.stringify(strict);
    const lenient = compileJsonSchema(lenientStrictSchema(strict));
    // Fails if additionalProperties: false were kept anywhere, or a nullable key stayed required.
    expect(lenient.issues({ q: 'x', tags: [{ name: 'a', extra: 1 }], page: 2 })).toEqual([]);
    expect(lenient.issues({ q: 'x', tags: [], filter: { lang: 'en', region: 'eu' } })).toEqual([]);
    // Fails if the check dropped what the SDK's parser refuses too.
    expect(lenient.issues({ tags: [{ note: null }] }).join('\n')).toMatch(/q[\s\S]*name/);
    expect(lenient.issues({ q: 1, tags: [], filter: { lang: 2 } }).length).toBeGreaterThan(0);
    // The tool's own schema is not changed (it is what the model is sent).
    expect(JSON.stringify(strict)).toBe(before);
  });
});

/**
 * The BFCL dialect converter (`lib/schemas/bfcl.ts`): its mapping, on hand-written schemas.
 * The evidence over BFCL's data (every ground-truth call of the four parallel categories run
 * through `runTools` against its converted schemas; mutated copies fail naming the parameter)
 * is spec/schemas/bfcl.corpus.slow.spec.ts, in `npm run test:slow`: 440 entries run five
 * times over cost about 2 s of CPU.
 */
import { describe, expect, it } from 'vitest';
import { bfclGroundTruthArguments, convertBfclSchema } from '../../lib/index.ts';

describe('convertBfclSchema: BFCL’s dialect → JSON Schema', () => {
  it('maps dict, float and tuple; drops any, optional and format; recurses into properties, items, additionalProperties', () => {
    const bfcl = {
      type: 'dict',
      properties: {
        base: { type: 'float', description: 'b', optional: true },
        when: { type: 'string', format: 'date' },
        pair: { type: 'tuple', items: { type: 'float' } },
        anything: { type: 'any', description: 'whatever' },
        nested: { type: 'dict', properties: { deep: { type: 'float' } }, additionalProperties: { type: 'float' } },
        either: { type: ['string', 'float', 'integer'] },
        loose: { type: ['string', 'any'] },
        pick: { type: 'string', enum: ['a', 'b'], default: 'a' },
      },
      required: ['base'],
    };
    const before = JSON.stringify(bfcl);
    expect(convertBfclSchema(bfcl)).toEqual({
      type: 'object',
      properties: {
        base: { type: 'number', description: 'b' },
        when: { type: 'string' },
        pair: { type: 'array', items: { type: 'number' } },
        anything: { description: 'whatever' },
        nested: { type: 'object', properties: { deep: { type: 'number' } }, additionalProperties: { type: 'number' } },
        either: { type: ['string', 'number', 'integer'] },
        loose: {},
        pick: { type: 'string', enum: ['a', 'b'], default: 'a' },
      },
      required: ['base'],
    });
    expect(JSON.stringify(bfcl)).toBe(before); // the input is not modified
  });

  it('gives the accept-anything schema {} for a missing parameters object', () => {
    expect(convertBfclSchema(undefined)).toEqual({});
    expect(convertBfclSchema('dict')).toEqual({});
  });

  it('bfclGroundTruthArguments: first acceptable value that is not "", "" alone = omitted, dicts resolved recursively', () => {
    expect(bfclGroundTruthArguments({ base: [3], mod: ['', 5], gone: [''], opts: [{ depth: [2, 3], name: [''] }], raw: 7 })).toEqual({
      base: 3,
      mod: 5,
      opts: { depth: 2 },
      raw: 7,
    });
  });
});

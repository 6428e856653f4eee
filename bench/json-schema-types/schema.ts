/**
 * A 30-property JSON Schema written `as const`, as a tool's `input`: the workload of
 * `bench/json-schema-types/run.mjs`. It mixes what a real tool's schema
 * has: required and optional properties, string / number / integer / boolean, enums, a
 * nullable type, nested objects with `additionalProperties: false`, a record
 * (`additionalProperties: { type: … }`), arrays of scalars and of objects.
 */
export const schema30 = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string', minLength: 1 },
    age: { type: 'integer', minimum: 0 },
    score: { type: 'number' },
    active: { type: 'boolean' },
    role: { type: 'string', enum: ['admin', 'user', 'guest'] },
    status: { enum: ['open', 'closed', 'pending'] },
    priority: { type: 'integer', enum: [1, 2, 3] },
    nickname: { type: ['string', 'null'] },
    tags: { type: 'array', items: { type: 'string' } },
    scores: { type: 'array', items: { type: 'number' } },
    address: {
      type: 'object',
      properties: { street: { type: 'string' }, city: { type: 'string' }, zip: { type: 'string' } },
      required: ['street', 'city'],
      additionalProperties: false,
    },
    points: {
      type: 'array',
      items: { type: 'object', properties: { lat: { type: 'number' }, lng: { type: 'number' } }, required: ['lat', 'lng'], additionalProperties: false },
    },
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    owner: {
      type: 'object',
      properties: {
        login: { type: 'string' },
        team: { type: 'object', properties: { slug: { type: 'string' }, size: { type: 'integer' } }, required: ['slug'], additionalProperties: false },
      },
      required: ['login'],
      additionalProperties: false,
    },
    path: { type: 'string' },
    encoding: { type: 'string', enum: ['utf8', 'base64', 'hex'] },
    offset: { type: 'integer' },
    limit: { type: 'integer', maximum: 1000 },
    recursive: { type: 'boolean' },
    pattern: { type: 'string' },
    caseSensitive: { type: 'boolean' },
    timeoutSeconds: { type: 'number' },
    retries: { type: 'integer' },
    mode: { type: 'string', enum: ['read', 'write', 'append'] },
    createdAt: { type: 'string', format: 'date-time' },
    url: { type: 'string', format: 'uri' },
    headers: { type: 'array', items: { type: 'object', properties: { key: { type: 'string' }, value: { type: 'string' } }, required: ['key', 'value'], additionalProperties: false } },
    dryRun: { type: 'boolean' },
    comment: { type: 'string', maxLength: 500 },
  },
  required: ['id', 'name', 'role', 'path', 'address', 'mode'],
  additionalProperties: false,
} as const;

/**
 * The JSON shapes a tool call and its result carry over the wire: the content blocks of a
 * result (MCP's, which every provider format maps) and a plain JSON Schema. Types only.
 *
 * @module
 */

/** A text content block of a tool result. */
export interface TextContent {
  type: 'text';
  text: string;
}

/**
 * An image content block of a tool result: base64 `data` and its MIME type (`image/png`…),
 * both non-empty: a block with either empty is not an image (a tool returning one gets an
 * error result; elsewhere it is replaced by a text saying so — docs/adr/0005-results.md).
 */
export interface ImageContent {
  type: 'image';
  data: string;
  mimeType: string;
}

/**
 * An audio content block of a tool result: base64 `data` and its MIME type (`audio/wav`…),
 * both non-empty as for {@link ImageContent}, as MCP's `audio` content (specification 2025-06-18, "Server features → Tools → Audio
 * content"). The provider formats send it as a text line naming it (no provider takes audio
 * in a tool result); an MCP server sends it as is.
 */
export interface AudioContent {
  type: 'audio';
  data: string;
  mimeType: string;
}

/**
 * A link to a resource the model or the application may fetch, as MCP's `resource_link`
 * content (specification 2025-06-18, "Tools → Resource links"). The provider formats send
 * it as one text line (`[resource link: <uri> "<name>" (<mimeType>): <description>]`).
 */
export interface ResourceLinkContent {
  type: 'resource_link';
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  /** Size of the resource in bytes, when known. */
  size?: number;
}

/**
 * A resource embedded in the result, as MCP's `resource` content (specification 2025-06-18,
 * "Tools → Embedded resources"): its `text`, or its binary content as base64 `blob`. The
 * provider formats send a text resource as a header line and its text, a binary one as a
 * line naming it.
 */
export interface EmbeddedResourceContent {
  type: 'resource';
  resource: { uri: string; mimeType?: string; text: string } | { uri: string; mimeType?: string; blob: string };
}

/**
 * One block of a tool result's content. Text and images go to every provider as they are;
 * audio, resource links and embedded resources are MCP's content types, kept as they are by
 * `createMcpServer` and `mcpTools`, and turned into text by the provider formats
 * ({@link contentBlockText}).
 */
export type ContentBlock = TextContent | ImageContent | AudioContent | ResourceLinkContent | EmbeddedResourceContent;

/**
 * A plain JSON Schema object (draft-07 or 2020-12), as tools from MCP servers, JSON files
 * or recorded requests describe their input. Validated without code generation
 * (`@cfworker/json-schema`), so it also runs under a strict Content-Security-Policy.
 */
export type JsonSchema = { readonly [key: string]: unknown };

/**
 * Real MCP servers for the specs: the reference servers installed from npm
 * (`@modelcontextprotocol/server-everything`, `@modelcontextprotocol/server-filesystem`),
 * started over stdio as `node <the package's bin>` (never npx), and a check that their
 * process is gone after the client closed.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

const require = createRequire(import.meta.url);

/** The absolute path of an installed package's (first) bin script, read from its package.json. */
export function packageBin(pkg: string): string {
  const manifestPath = require.resolve(`${pkg}/package.json`);
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { bin?: string | Record<string, string> };
  const bin = typeof manifest.bin === 'string' ? manifest.bin : Object.values(manifest.bin ?? {})[0];
  if (bin === undefined) throw new Error(`${pkg} has no bin`);
  return join(dirname(manifestPath), bin);
}

/** A connected client, its server's pid, and every JSON-RPC message the client sent. */
export interface StartedServer {
  client: Client;
  pid: number;
  sent: JSONRPCMessage[];
  /** Closes the client (which ends the server) and resolves once the process is gone. */
  close(): Promise<void>;
}

/** Starts `node <bin> ...args` as an MCP server over stdio and connects a client to it. */
export async function startServer(pkg: string, args: readonly string[]): Promise<StartedServer> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [packageBin(pkg), ...args], stderr: 'pipe' });
  const sent: JSONRPCMessage[] = [];
  const send = transport.send.bind(transport);
  transport.send = (message: JSONRPCMessage) => {
    sent.push(message);
    return send(message);
  };
  const client = new Client({ name: 'toolrun-spec', version: '0.0.0' });
  await client.connect(transport);
  const pid = transport.pid;
  if (pid === null) throw new Error(`${pkg}: no server process`);
  return {
    client,
    pid,
    sent,
    async close() {
      await client.close();
      for (let i = 0; i < 100 && isAlive(pid); i++) await new Promise((r) => setTimeout(r, 20));
    },
  };
}

/** True while a process with this pid exists (signal 0 checks without sending anything). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

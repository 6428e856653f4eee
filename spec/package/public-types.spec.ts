/**
 * Every type a user needs to name is exported: the parameter and return
 * types of each public function and class, and the types those public types refer to, are
 * exported by one of the package's entries (`toolrun`, `toolrun/tools`, `toolrun/mcp`, `toolrun/otel`,
 * `toolrun/testing`) — so `fromAnthropic`'s `AnthropicMessageInput` or `ReorderBuffer`'s
 * `ReorderBufferOptions` can be written down without `Parameters<typeof …>`.
 */
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const entries = ['lib/index.ts', 'lib/tools/index.ts', 'lib/mcp/index.ts', 'lib/testing.ts', 'lib/otel/index.ts', 'lib/inspect/index.ts'].map((e) => root + e);

describe('public types', () => {
  // A whole-program typecheck: about 20 s on a loaded 2-core machine; the limit is a hang guard.
  it('every type named in a public signature or public type is exported by an entry of the package', { timeout: 180_000 }, () => {
    const program = ts.createProgram(entries, {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      allowImportingTsExtensions: true,
      noEmit: true,
      strict: true,
      skipLibCheck: true,
      noResolve: false,
      types: ['node'],
    });
    const checker = program.getTypeChecker();
    const resolve = (symbol: ts.Symbol): ts.Symbol => (symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol);
    const publicSymbols = entries.flatMap((entry) => checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(entry)!)!).map(resolve));
    const exported = new Set(publicSymbols.flatMap((s) => s.declarations ?? []));
    const missing = new Set<string>();

    const checkTypes = (node: ts.Node | undefined, where: string): void => {
      if (node === undefined) return;
      const visit = (n: ts.Node): void => {
        if (ts.isTypeReferenceNode(n)) {
          const found = checker.getSymbolAtLocation(n.typeName);
          const symbol = found === undefined ? undefined : resolve(found);
          const declarations = symbol?.declarations ?? [];
          const own = declarations.length > 0 && declarations[0]!.getSourceFile().fileName.startsWith(`${root}lib/`);
          if (own && !(symbol!.flags & ts.SymbolFlags.TypeParameter) && !declarations.some((d) => exported.has(d))) {
            missing.add(`${symbol!.name} (used by ${where})`);
          }
        }
        ts.forEachChild(n, visit);
      };
      visit(node);
    };

    for (const symbol of publicSymbols) {
      for (const d of symbol.declarations ?? []) {
        if (ts.isFunctionDeclaration(d)) {
          d.typeParameters?.forEach((p) => checkTypes(p, symbol.name));
          d.parameters.forEach((p) => checkTypes(p.type, symbol.name));
          checkTypes(d.type, symbol.name);
        } else if (ts.isClassDeclaration(d)) {
          for (const member of d.members) {
            const hidden = (member.name !== undefined && ts.isPrivateIdentifier(member.name)) || (ts.getCombinedModifierFlags(member as ts.Declaration) & ts.ModifierFlags.Private) !== 0;
            if (hidden) continue;
            if (ts.isConstructorDeclaration(member) || ts.isMethodDeclaration(member)) {
              member.parameters.forEach((p) => checkTypes(p.type, `${symbol.name}.${member.name?.getText() ?? 'constructor'}`));
              checkTypes(member.type, `${symbol.name}.${member.name?.getText() ?? 'constructor'}`);
            }
          }
        } else if (ts.isInterfaceDeclaration(d) || ts.isTypeAliasDeclaration(d)) {
          checkTypes(d, symbol.name);
        } else if (ts.isVariableDeclaration(d)) {
          checkTypes(d.type, symbol.name);
        }
      }
    }
    expect([...missing].sort()).toEqual([]);
    // The check sees what it must: these were missing before and are named now.
    const names = new Set(publicSymbols.map((s) => s.name));
    for (const name of ['AnthropicMessageInput', 'OpenAIChatMessageInput', 'OpenAIResponsesInput', 'ReorderBufferOptions', 'MergeSourceList', 'WithTimeoutOptions']) {
      expect(names.has(name), name).toBe(true);
    }
  });
});

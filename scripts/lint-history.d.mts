/** One line of history found by {@link findHistory}. */
export interface HistoryFinding {
  readonly file: string;
  readonly line: number;
  readonly rule: string;
  readonly text: string;
}
export declare const RULES: readonly { readonly name: string }[];
export declare const PLANTED: { readonly report: readonly (readonly [string, string])[]; readonly pass: readonly string[] };
export declare function historyIn(line: string): { rule: string; text: string } | undefined;
export declare function specTitles(source: string): { line: number; title: string }[];
export declare function findHistory(root: string): HistoryFinding[];
export declare function plantedCheck(): { missed: string[]; falsePositives: string[] };

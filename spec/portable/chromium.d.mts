import type { BrowserContext, Page } from 'playwright-core';
export declare const CHROMIUM: string;
export declare function launchChromium(): Promise<{ context: BrowserContext; page: Page; close(): Promise<void> }>;

// Monaco ships no declarations for its language definitions; this is the shape cpp.js exports.
declare module 'monaco-editor/languages/definitions/cpp/cpp' {
  import type { languages } from 'monaco-editor/editor/editor.api';
  export const conf: languages.LanguageConfiguration;
  export const language: languages.IMonarchLanguage & { keywords: string[] };
}

// Monaco's one switch for "Tab moves focus" (tab trapping), shared by every editor on the page.
declare module 'monaco-editor/editor/browser/config/tabFocus' {
  export const TabFocus: {
    getTabFocusMode(): boolean;
    setTabFocusMode(tabFocusMode: boolean): void;
    onDidChangeTabFocus(listener: (tabFocusMode: boolean) => void): { dispose(): void };
  };
}

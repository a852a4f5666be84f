// Monaco ships no declarations for its language definitions; this is the shape cpp.js exports.
declare module 'monaco-editor/languages/definitions/cpp/cpp' {
  import type { languages } from 'monaco-editor/editor/editor.api';
  export const conf: languages.LanguageConfiguration;
  export const language: languages.IMonarchLanguage & { keywords: string[] };
}

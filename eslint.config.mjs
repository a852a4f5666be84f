// Lint, including the layering rule of ARCHITECTURE.md §3: a folder importing what it may not fails
// the build. (Same idea as VS Code's layering rule and GitHub Desktop's restricted imports.)
import js from '@eslint/js';
import importPlugin from 'eslint-plugin-import';
import tseslint from 'typescript-eslint';

/** `import { z }` or `import z` (from zod or zod/v4) makes esbuild bundle zod's whole namespace (every locale): a third to two thirds of each bundle. */
const zodAsNamespace = {
  selector: "ImportDeclaration[source.value=/^zod(\\/|$)/] > :matches(ImportDefaultSpecifier, ImportSpecifier[imported.name='z'])",
  message: "Write `import * as z from 'zod'`: esbuild then bundles only what is used.",
};

const nodeAndHost = ['electron', 'ws', 'commander', 'node:*', 'fs', 'path', 'os', 'child_process', 'http', 'crypto', 'net'];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'native/build/**', 'test-results/**', '.gpu/**', '.tmp/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.{ts,tsx}'],
    plugins: { import: importPlugin },
    settings: { 'import/resolver': { node: { extensions: ['.ts', '.tsx', '.js', '.mjs'] } } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': ['error', zodAsNamespace],
      'import/no-restricted-paths': [
        'error',
        {
          zones: [
            {
              target: './core',
              from: ['./main', './preload', './renderer', './native', './test', './bench'],
              message: 'core/ is pure: it may import only core/.',
            },
            {
              target: './renderer',
              from: ['./main', './preload', './native', './test'],
              message: 'renderer/ may import only core/ (and talk to the host through the typed API).',
            },
            { target: './preload', from: ['./main', './renderer', './native', './test'], message: 'preload/ may import only core/ types.' },
            { target: './main', from: ['./renderer', './preload', './test', './bench'], message: 'main/ may import core/ and native/ only.' },
          ],
        },
      ],
    },
  },
  {
    files: ['core/**/*.ts'],
    rules: {
      'import/no-nodejs-modules': 'error',
      'no-restricted-imports': [
        'error',
        {
          patterns: [{ group: [...nodeAndHost, 'react', 'react-dom', 'zustand'], message: 'core/ is pure TypeScript: no Node, DOM, Electron or UI imports.' }],
        },
      ],
    },
  },
  {
    files: ['renderer/**/*.{ts,tsx}'],
    rules: {
      'import/no-nodejs-modules': 'error',
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: nodeAndHost, message: 'The renderer is sandboxed: it reaches the host only through the typed API.' }] },
      ],
    },
  },
  {
    // Every renderer call goes through the store (renderer/store/*-slice.ts): a component calls store actions and reads
    // store state, so what a call does, its errors in words and what it leaves behind live in one place per feature.
    files: ['renderer/components/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-syntax': [
        'error',
        zodAsNamespace,
        {
          selector: "CallExpression[callee.property.name='invoke']",
          message: 'Components do not call the host: add an action to the feature’s slice in renderer/store/ and call that.',
        },
        {
          selector: "MemberExpression[property.name='api'][object.type='Identifier'][object.name=/^(s|state|store)$/]",
          message: 'Components do not reach the host’s API: add an action to the feature’s slice in renderer/store/ and call that.',
        },
      ],
    },
  },
  {
    // Electron's checklist, item 14: nothing the app shows may open outside content in the user's browser.
    files: ['main/**/*.ts', 'preload/**/*.ts', 'renderer/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'shell', property: 'openExternal', message: 'No shell.openExternal: the workbench opens nothing outside itself.' },
      ],
    },
  },
  {
    // The desktop shell's decisions, tested where Electron cannot run: only electron-main.ts and utility-launcher.ts touch Electron.
    files: ['main/electron/**/*.ts'],
    ignores: ['main/electron/electron-main.ts', 'main/electron/utility-launcher.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['electron'], message: 'This module is the shell’s pure decisions: Electron stays in electron-main.ts and utility-launcher.ts.' },
          ],
        },
      ],
    },
  },
  {
    files: ['main/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['**/*.{js,mjs,cjs}'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', require: 'readonly', __dirname: 'readonly', module: 'writable', URL: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);

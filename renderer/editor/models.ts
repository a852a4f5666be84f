import type { editor } from 'monaco-editor/editor/editor.api';

import { monaco } from './monaco-setup';

/** Monaco models by document id. They hold the text and the undo stack, which survive saves. */
const models = new Map<string, editor.ITextModel>();

export function createModel(id: string, text: string, name: string): editor.ITextModel {
  models.get(id)?.dispose();
  const model = monaco.editor.createModel(text, 'cuda', monaco.Uri.parse(`workbench://doc/${id}/${encodeURIComponent(name)}`));
  models.set(id, model);
  return model;
}

export const getModel = (id: string): editor.ITextModel | undefined => models.get(id);

export function disposeModel(id: string): void {
  models.get(id)?.dispose();
  models.delete(id);
}

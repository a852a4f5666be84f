/**
 * A child process that reads one saved diagnosis (a file from outside) so that nothing in it can end the host: the
 * file read bounded (a regular file only), parsed, and checked against the report's schema here, under this
 * process's own heap limit. A file that makes V8 abort (a huge nesting, a string past V8's limit) costs this process.
 * It answers on standard output with one JSON line: the checked report (unknown keys dropped, so its shape and depth
 * are the schema's), or why it was refused.
 *   node diagnosis-reader.js <path> <maxBytes>
 */
import { basename } from 'node:path';

import { parseDiagnosisReport } from '../../core/diagnose/report-schema';
import { readRegularFile } from '../services/safe-fs';

async function main(): Promise<void> {
  const [path, max] = process.argv.slice(2);
  const reply = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`);
  if (!path || !max) return void reply({ ok: false, error: 'usage: diagnosis-reader <path> <maxBytes>' });
  let bytes: Buffer;
  try {
    bytes = (await readRegularFile(path, Number(max))).bytes;
  } catch (error) {
    return void reply({ ok: false, error: `${path} could not be read: ${error instanceof Error ? error.message : String(error)}` });
  }
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    return void reply({
      ok: false,
      error: `${basename(path)} is not JSON (${error instanceof Error ? error.message : String(error)}): open a file that \`gpu-workbench diagnose --json\` wrote.`,
    });
  }
  const parsed = parseDiagnosisReport(value);
  reply(
    parsed.ok
      ? { ok: true, report: parsed.report }
      : { ok: false, error: `${basename(path)} is not a diagnosis report (${parsed.error}): open a file that \`gpu-workbench diagnose --json\` wrote.` },
  );
}

void main();

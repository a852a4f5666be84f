// `npm start`: the desktop app when Electron's binary is installed, otherwise the headless serve host
// with a word on why and how to get the desktop app.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const root = new URL('..', import.meta.url).pathname;
let electron = null;
let why = '';
try {
  electron = require('electron'); // the path of the binary, when its download succeeded
  if (typeof electron !== 'string' || !existsSync(electron)) {
    why = `the Electron package is installed but its binary is not (${electron})`;
    electron = null;
  }
} catch (error) {
  why = `Electron's binary is not installed (${String(error.message).split('\n')[0]})`;
}

// A developer's start: the host checks each answer against its channel's declaration (main/host-api.ts).
const env = { NODE_ENV: 'development', ...process.env };
if (electron) {
  spawn(electron, [root], { stdio: 'inherit', env }).on('exit', (code) => process.exit(code ?? 0));
} else {
  console.log(`Starting the headless workbench instead of the desktop app: ${why}.`);
  console.log('To get the desktop app on a machine with internet access: node node_modules/electron/install.js, then npm start.');
  spawn(process.execPath, [`${root}dist/main/serve.js`, ...process.argv.slice(2)], { stdio: 'inherit', env }).on('exit', (code) => process.exit(code ?? 0));
}

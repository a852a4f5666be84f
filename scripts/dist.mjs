// `npm run dist`: desktop packages with electron-builder, which is not a dependency because it and the
// Electron binary download from outside the npm registry. Explains what is missing instead of failing.
import { spawnSync } from 'node:child_process';

const probe = spawnSync('npx', ['--no-install', 'electron-builder', '--version'], { encoding: 'utf8' });
if (probe.status !== 0) {
  console.error('electron-builder is not installed. On a machine with internet access:');
  console.error('  npm install --no-save electron-builder && node node_modules/electron/install.js && npm run dist');
  process.exit(2);
}
const result = spawnSync('npx', ['--no-install', 'electron-builder', '--config', 'electron-builder.yml'], { stdio: 'inherit' });
process.exit(result.status ?? 1);

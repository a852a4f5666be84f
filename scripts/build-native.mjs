// Builds the addon with cmake-js against node-api-headers (no download, no CUDA toolkit needed).
// Skips the build when the .node file is newer than every source, so `npm ci` and `npm run build`
// are cheap to repeat.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const output = join(root, 'native/build/Release/gpu_workbench_native.node');
const sources = [join(root, 'native/CMakeLists.txt'), ...readdirSync(join(root, 'native/src')).map((f) => join(root, 'native/src', f))];
const newest = Math.max(...sources.map((f) => statSync(f).mtimeMs));
if (existsSync(output) && statSync(output).mtimeMs > newest && !process.argv.includes('--force')) {
  console.log('native addon is up to date');
  process.exit(0);
}
const cmakeJs = join(root, 'node_modules/cmake-js/bin/cmake-js');
execFileSync(process.execPath, [cmakeJs, 'compile', '--directory', 'native', '--out', 'native/build', '--parallel', '2'], {
  cwd: root,
  stdio: 'inherit',
});

#!/usr/bin/env node
'use strict';
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const cli = join(__dirname, '..', 'dist', 'main', 'cli.js');
if (!existsSync(cli)) {
  console.error('✗ GPU Workbench is not built yet: run `npm run build` (or `npm ci`) in ' + join(__dirname, '..'));
  process.exit(2);
}
require(cli);

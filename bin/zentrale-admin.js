#!/usr/bin/env node
// The operator tool as an installed command: the compiled CLI (`npm run build`, run at install).
await import('../dist/cli/admin.js');

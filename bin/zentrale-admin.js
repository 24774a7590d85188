#!/usr/bin/env node
// The operator tool as an installed command: runs the TypeScript source through tsx.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/admin.ts');

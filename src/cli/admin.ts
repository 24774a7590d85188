/** Entry of the operator tool: `npm run admin -- <noun> <verb> ...` and the `zentrale-admin` bin. */
import { runAdmin } from './program.js';

process.exitCode = await runAdmin(process.argv.slice(2));

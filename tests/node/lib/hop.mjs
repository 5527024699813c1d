// A stand-in for an editor process that is not a shell: it runs the command
// given on its command line with the same stdio and exits with its status.
// Tests use it to put a known, non-shell "editor" above a terminal's shell.

import { spawn } from 'node:child_process';

const [command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: 'inherit' });
child.on('exit', (code, signal) => {
  process.exit(code ?? (signal ? 1 : 0));
});
for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => child.kill(sig));
}

#!/usr/bin/env node
// The rudder command. `--version` is answered here so it loads nothing else (bench B10).
import { readFileSync } from 'node:fs'
import { homedir } from 'node:os'

const args = process.argv.slice(2)
if (args.length === 1 && (args[0] === '--version' || args[0] === '-v')) {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  process.stdout.write(`rudder ${manifest.version}\n`)
} else {
  let cli
  try {
    cli = await import('../dist/frontends/cli/main.js')
  } catch (error) {
    if (error?.code !== 'ERR_MODULE_NOT_FOUND') throw error
    process.stderr.write(
      'rudder: dist/ is missing. Build it with `npm run build` (npm ci does this for you).\n',
    )
    process.exit(2)
  }
  const io = {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
    home: homedir(),
    onInterrupt(handler) {
      // The first Ctrl-C cancels cleanly; a second one quits at once, in case something
      // (a tool ignoring its abort signal) keeps the cancel from finishing.
      let count = 0
      const listener = () => {
        if (++count === 1) return handler()
        process.stderr.write(
          'rudder: interrupted again; quitting without waiting for the turn to end\n',
        )
        process.exit(130)
      }
      process.on('SIGINT', listener)
      return () => process.off('SIGINT', listener)
    },
  }
  process.exitCode = await cli.main(args, io)
}

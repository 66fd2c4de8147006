#!/usr/bin/env node
// The rudder command. `--version` is answered here so it loads nothing else (bench B10).
import { fstatSync, readFileSync, statSync } from 'node:fs'
import { homedir } from 'node:os'

const args = process.argv.slice(2)
if (args.length === 1 && (args[0] === '--version' || args[0] === '-v')) {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
  process.stdout.write(`rudder ${manifest.version}\n`)
} else {
  let cli
  try {
    cli = await import(cliModule())
  } catch (error) {
    if (error?.code !== 'ERR_MODULE_NOT_FOUND') throw error
    process.stderr.write(
      'rudder: dist/ is missing. Build it with `npm run build` (npm ci does this for you).\n',
    )
    process.exit(2)
  }
  // A reader that goes away (`rudder … | head -1`) closes the pipe: the rest of the output is
  // dropped quietly, and the run itself finishes and is logged like any other.
  const quietOnClose = (stream) => {
    let closed = false
    stream.on('error', (error) => {
      if (error?.code !== 'EPIPE' && error?.code !== 'ERR_STREAM_DESTROYED') throw error
      closed = true
    })
    return {
      write(text) {
        if (closed) return false
        try {
          return stream.write(text)
        } catch (error) {
          if (error?.code !== 'EPIPE') throw error
          closed = true
          return false
        }
      },
    }
  }
  // Told from fd 0's type, so a run that reads no stdin never sets up `process.stdin` (a few
  // ms of start-up, bench B10): only a character device other than /dev/null may be a terminal.
  const stdinKind = (() => {
    try {
      const stat = fstatSync(0)
      if (stat.isFIFO()) return 'pipe'
      if (stat.isFile()) return 'file'
      if (
        !stat.isCharacterDevice() ||
        stat.rdev === statSync('/dev/null', { throwIfNoEntry: false })?.rdev
      )
        return 'other'
      return process.stdin.isTTY ? 'terminal' : 'other'
    } catch {
      return 'other'
    }
  })()
  const io = {
    get stdin() {
      return process.stdin
    },
    stdinKind,
    stdout: args[0] === 'acp' ? process.stdout : quietOnClose(process.stdout),
    stderr: quietOnClose(process.stderr),
    isTerminal: { stdout: process.stdout.isTTY === true, stderr: process.stderr.isTTY === true },
    env: process.env,
    cwd: process.cwd(),
    home: homedir(),
    onInterrupt(handler) {
      // The first Ctrl-C or SIGTERM cancels cleanly (the turn is logged as canceled); a second
      // one quits at once, in case something (a tool ignoring its abort signal) keeps the
      // cancel from finishing.
      let count = 0
      const listener = (signal) => {
        if (++count === 1) return handler(signal)
        process.stderr.write(
          'rudder: stopped again; quitting without waiting for the turn to end\n',
        )
        process.exit(signal === 'SIGTERM' ? 143 : 130)
      }
      process.on('SIGINT', listener)
      process.on('SIGTERM', listener)
      return () => {
        process.off('SIGINT', listener)
        process.off('SIGTERM', listener)
      }
    },
  }
  process.exitCode = await cli.main(args, io)
}

/**
 * The command line's bundle (dist/bundle/cli/, made by `npm run build`: one file per lazily
 * loaded part instead of one per module, bench B10, docs/decisions/0147), unless tsc has
 * rebuilt dist/ since the bundle was made (a build that ran tsc alone): then tsc's modules, so
 * the command never runs stale code.
 */
function cliModule() {
  const bundled = new URL('../dist/bundle/cli/main.js', import.meta.url)
  const compiled = new URL('../dist/frontends/cli/main.js', import.meta.url)
  const builtAt = (url) => statSync(url, { throwIfNoEntry: false })?.mtimeMs ?? -1
  const bundledAt = builtAt(bundled)
  return bundledAt >= 0 && bundledAt >= builtAt(compiled) ? bundled.href : compiled.href
}

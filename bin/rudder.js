#!/usr/bin/env node
// The rudder command. `--version` is answered here so it loads nothing else (bench B10).
// CommonJS (bin/package.json): Node starts an ES module main through its ES loader, which
// costs a start-up a few percent of `node -e 0` (decision 0137).
'use strict'
const { fstatSync, readFileSync, statSync, writeFileSync } = require('node:fs')
const { homedir } = require('node:os')
const { dirname, join } = require('node:path')
const { pathToFileURL } = require('node:url')

const args = process.argv.slice(2)
if (args.length === 1 && (args[0] === '--version' || args[0] === '-v')) {
  const manifest = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8'))
  process.stdout.write(`rudder ${manifest.version}\n`)
} else {
  // An error that escapes ends the run as an uncaught one would: printed, exit code 1.
  void start()
}

async function start() {
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
  let cli
  try {
    cli = await loadCli(stdinKind)
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
 * The command line, bundled by `npm run build` (one file per lazily loaded part instead of one
 * per module; bench B10, docs/decisions/0147, 0136 and 0137): ES modules (dist/bundle/cli/)
 * when the command opens the terminal UI, which reads keys while its modules load; otherwise
 * CommonJS compiled with V8's code cache (dist/bundle/cli-cached/), which needs a Node that can
 * require() an ES module (20.19+). The CommonJS entry is what tells the two apart. tsc's
 * modules when the bundle is missing or older than them (a build that ran tsc alone), so the
 * command never runs stale code.
 */
async function loadCli(stdinKind) {
  const dist = join(__dirname, '..', 'dist')
  const builtAt = (path) => statSync(join(dist, path), { throwIfNoEntry: false })?.mtimeMs ?? -1
  const compiledAt = builtAt('frontends/cli/main.js')
  if (process.features.require_module === true) {
    const cachedAt = builtAt('bundle/cli-cached/main.cjs')
    if (cachedAt >= 0 && cachedAt >= compiledAt) {
      const cached = requireWithCodeCache(join(dist, 'bundle/cli-cached/main.cjs'))
      // On a terminal the parsed command decides (decision 0137): only the terminal UI needs
      // the ES build; a task typed in a shell runs with the cache like a piped one.
      if (stdinKind !== 'terminal' || cached.opensTerminalUi?.(args, process.cwd()) === false)
        return cached
    }
  }
  const bundledAt = builtAt('bundle/cli/main.js')
  const esEntry =
    bundledAt >= 0 && bundledAt >= compiledAt ? 'bundle/cli/main.js' : 'frontends/cli/main.js'
  return import(pathToFileURL(join(dist, esEntry)).href)
}

/**
 * Requires the bundle's entry, compiling each file of the bundle with the code cache that the
 * build wrote beside it (`<file>.cache`: V8's bytecode for what a one-answer run, `--help` and
 * a first SQLite run execute), so a start compiles only what the cache lacks. V8 checks a cache
 * against its version, flags and the source's length and ignores one that does not fit; the
 * build clears the directory, so a cache never outlives the file it was made from. With
 * RUDDER_CODE_CACHE=write (the build's own runs) the caches are written at exit.
 */
function requireWithCodeCache(entry) {
  // Loaded here, so that `--version` does not load them.
  const Module = require('node:module')
  const vm = require('node:vm')
  const bundleDir = `${dirname(entry)}/`
  const scripts = process.env.RUDDER_CODE_CACHE === 'write' ? [] : undefined
  const compile = Module.prototype._compile
  Module.prototype._compile = function (content, filename) {
    if (!filename.startsWith(bundleDir)) return compile.call(this, content, filename)
    let cachedData
    try {
      cachedData = readFileSync(`${filename}.cache`)
    } catch {
      // No cache (a build that could not write one): compiled from source as usual.
    }
    const script = new vm.Script(Module.wrap(content), { filename, cachedData })
    scripts?.push({ filename, script })
    const wrapper = script.runInThisContext({ displayErrors: true })
    return wrapper.call(
      this.exports,
      this.exports,
      Module.createRequire(filename),
      this,
      filename,
      dirname(filename),
    )
  }
  if (scripts)
    process.on('exit', () => {
      for (const { filename, script } of scripts)
        writeFileSync(`${filename}.cache`, script.createCachedData())
    })
  return require(entry)
}

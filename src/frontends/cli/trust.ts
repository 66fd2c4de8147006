/**
 * `rudder trust [dir]`, `rudder trust --list`, `rudder untrust [dir]`: which project
 * directories' `.rudder/config.json` applies in full (docs/spec.md §9.5). The list lives in the
 * user config file.
 */
import { trustDirectory, trustedDirectories, untrustDirectory } from '../../runtime/trust.js'
import type { TrustCommand } from './args.js'
import type { CliIo } from './io.js'

export function runTrust(command: TrustCommand, io: CliIo): number {
  const location = { cwd: io.cwd, env: io.env, home: io.home }
  switch (command.action) {
    case 'list': {
      const list = trustedDirectories(location)
      io.stdout.write(
        list.length === 0
          ? 'no trusted directories (rudder trust [dir] adds one)\n'
          : `${list.join('\n')}\n`,
      )
      return 0
    }
    case 'trust': {
      const change = trustDirectory(location, command.directory)
      io.stdout.write(
        change.isChanged
          ? `trusted ${change.directory}: its .rudder/config.json now applies in full (providers, approvals, hooks); recorded in ${change.file}\n`
          : `${change.directory} was already trusted\n`,
      )
      return 0
    }
    case 'untrust': {
      const change = untrustDirectory(location, command.directory)
      io.stdout.write(
        change.isChanged
          ? `no longer trusted: ${change.directory}; its .rudder/config.json may only tighten approvals now\n`
          : `${change.directory} was not trusted\n`,
      )
      return 0
    }
  }
}

/**
 * Finding every process a bash call started, including those that left its process group
 * (`setsid`, daemons): each call's environment carries a random tag, which children inherit,
 * and on Linux `/proc/<pid>/environ` shows it (docs/decisions/0045). A process that clears its
 * environment (`env -i`) cannot be found this way.
 */
import { readdir, readFile } from 'node:fs/promises'

/** The variable that carries a call's tag. */
export const PROCESS_TAG_VARIABLE = 'RUDDER_PROCESS_TAG'

/** A process found by its tag: its id, process group and state letter (`Z` for a zombie). */
export type TaggedProcess = { readonly pid: number; readonly group: number; readonly state: string }

/**
 * The live processes (zombies left out) whose environment holds `tag`; undefined when this
 * system has no `/proc` to look in. Processes of other users cannot be read and are not listed.
 */
export async function findTagged(tag: string): Promise<TaggedProcess[] | undefined> {
  let entries: string[]
  try {
    entries = await readdir('/proc')
  } catch {
    return undefined
  }
  const needle = `${PROCESS_TAG_VARIABLE}=${tag}\0`
  const found: TaggedProcess[] = []
  await Promise.all(
    entries
      .filter((entry) => /^\d+$/.test(entry))
      .map(async (entry) => {
        try {
          const environment = await readFile(`/proc/${entry}/environ`, 'latin1')
          if (!environment.includes(needle)) return
          const stat = await readFile(`/proc/${entry}/stat`, 'latin1')
          // pid (comm) state ppid pgrp …; comm may hold spaces and parentheses.
          const [state, , group] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
          if (state === undefined || state === 'Z' || state === 'X') return
          found.push({ pid: Number(entry), group: Number(group), state })
        } catch {
          // Gone meanwhile, or another user's: not one of ours to report.
        }
      }),
  )
  return found
}

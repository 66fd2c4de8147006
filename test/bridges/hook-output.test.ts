/** Decoding of hook outputs per dialect: exit codes, JSON and plain text, legacy and unsupported fields. */
import { describe, expect, it } from 'vitest'
import { decodeHookRun } from '../../src/bridges/hook-output.js'
import type { HookProcessResult } from '../../src/bridges/hook-process.js'

const exited = (exitCode: number, stdout = '', stderr = ''): HookProcessResult => ({
  outcome: 'exited',
  exitCode,
  signal: null,
  stdout,
  stderr,
  durationMs: 5,
})
const claude = (event: string, run: HookProcessResult) => decodeHookRun('claude', event, run)
const codex = (event: string, run: HookProcessResult) => decodeHookRun('codex', event, run)

describe('Claude Code outputs', () => {
  it('parses pretty-printed JSON spread over many lines', () => {
    const stdout =
      '{\n  "hookSpecificOutput": {\n    "hookEventName": "PreToolUse",\n    "permissionDecision": "deny",\n    "permissionDecisionReason": "no"\n  }\n}\n'
    expect(claude('PreToolUse', exited(0, stdout))).toMatchObject({
      status: 'ok',
      decision: 'deny',
      reason: 'no',
    })
  })

  it('legacy {"decision":"approve"} means allow and {"continue":true} means nothing, not an error', () => {
    expect(claude('PreToolUse', exited(0, '{"decision":"approve"}'))).toMatchObject({
      status: 'ok',
      decision: 'allow',
    })
    expect(claude('PreToolUse', exited(0, '{"decision":"block","reason":"r"}'))).toMatchObject({
      decision: 'deny',
      reason: 'r',
    })
    expect(claude('Stop', exited(0, '{"continue":true}'))).toEqual({
      status: 'ok',
      contexts: [],
      ignored: [],
    })
  })

  it('exit 2 blocks with stderr as the reason, even when stderr looks like JSON; a JSON blocking reason wins', () => {
    expect(claude('UserPromptSubmit', exited(2, '', '{"decision":"approve"}\n'))).toMatchObject({
      decision: 'block',
      reason: '{"decision":"approve"}',
    })
    expect(
      claude(
        'PreToolUse',
        exited(
          2,
          '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}',
          'nope',
        ),
      ),
    ).toMatchObject({ decision: 'deny', reason: 'nope' })
    expect(
      claude('Stop', exited(2, '{"decision":"block","reason":"from json"}', 'from stderr')),
    ).toMatchObject({
      decision: 'block',
      reason: 'from json',
    })
  })

  it('another exit code is a non-blocking error with the first stderr line, unless valid JSON answered', () => {
    expect(claude('PreToolUse', exited(1, '', 'boom\nmore'))).toEqual({
      status: 'error',
      error: 'Failed with non-blocking status code 1: boom',
      contexts: [],
      ignored: [],
    })
    expect(
      claude(
        'PreToolUse',
        exited(
          1,
          '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny"}}',
        ),
      ),
    ).toMatchObject({ status: 'ok', decision: 'deny' })
  })

  it('plain stdout is context for SessionStart and UserPromptSubmit only; text that only starts like JSON is plain', () => {
    expect(claude('UserPromptSubmit', exited(0, '{not json\n'))).toMatchObject({
      contexts: ['{not json'],
    })
    expect(claude('SessionStart', exited(0, 'hello\n'))).toMatchObject({ contexts: ['hello'] })
    expect(claude('PreToolUse', exited(0, 'hello\n'))).toEqual({
      status: 'ok',
      contexts: [],
      ignored: [],
    })
  })

  it('JSON that fails the schema, or names another event, is a non-blocking error', () => {
    expect(claude('Stop', exited(0, '{"continue":"no"}'))).toMatchObject({ status: 'error' })
    expect(
      claude('PostToolUse', exited(0, '{"hookSpecificOutput":{"hookEventName":"PreToolUse"}}')),
    ).toMatchObject({ status: 'error', error: expect.stringContaining('expected "PostToolUse"') })
  })

  it('reports fields it does not act on, and defer as ignored', () => {
    expect(
      claude(
        'PreToolUse',
        exited(
          0,
          '{"terminalSequence":"\\u0007","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"defer"}}',
        ),
      ),
    ).toMatchObject({ status: 'ok', ignored: ['terminalSequence', 'permissionDecision "defer"'] })
    expect(
      claude(
        'PreToolUse',
        exited(
          0,
          '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"defer"}}',
        ),
      ).decision,
    ).toBeUndefined()
  })

  it('timeouts and failures to start are non-blocking errors', () => {
    expect(
      claude('PreToolUse', {
        ...exited(0),
        outcome: 'timed-out',
        exitCode: null,
        durationMs: 1000,
      }),
    ).toMatchObject({
      status: 'error',
      error: 'timed out after 1s; its output was discarded',
    })
  })
})

describe('Codex outputs', () => {
  it('unsupported PreToolUse answers fail open: ask, approve, continue, updatedInput without allow', () => {
    for (const stdout of [
      '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask"}}',
      '{"decision":"approve"}',
      '{"continue":false}',
      '{"suppressOutput":true}',
      '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"x"}}}',
    ])
      expect(codex('PreToolUse', exited(0, stdout))).toMatchObject({ status: 'error' })
  })

  it('reads stdout only on exit 0; invalid JSON-looking output and unknown fields are errors', () => {
    expect(codex('PreToolUse', exited(1, '{"decision":"block","reason":"x"}'))).toMatchObject({
      status: 'error',
      error: 'hook exited with code 1',
    })
    expect(codex('PreToolUse', exited(0, '{"decision":'))).toMatchObject({ status: 'error' })
    expect(codex('PreToolUse', exited(0, '[1]'))).toMatchObject({ status: 'error' })
    expect(codex('Stop', exited(0, '{"extra":1}'))).toMatchObject({ status: 'error' })
    expect(codex('PreToolUse', exited(0, 'ran fine\n'))).toEqual({
      status: 'ok',
      contexts: [],
      ignored: [],
    })
  })

  it('PreToolUse deny, legacy block and allow with updatedInput', () => {
    expect(codex('PreToolUse', exited(0, '{"decision":"block","reason":"r"}'))).toMatchObject({
      decision: 'deny',
      reason: 'r',
    })
    expect(
      codex(
        'PreToolUse',
        exited(
          0,
          '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"y"}}}',
        ),
      ),
    ).toMatchObject({ decision: 'allow', updatedInput: { command: 'y' } })
  })

  it('PermissionRequest reserved fields fail closed', () => {
    expect(
      codex(
        'PermissionRequest',
        exited(
          0,
          '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{}}}}',
        ),
      ),
    ).toMatchObject({ decision: 'deny' })
  })

  it('Stop: continue false wins, and is kept with its stopReason', () => {
    expect(
      codex(
        'Stop',
        exited(0, '{"continue":false,"stopReason":"done","decision":"block","reason":"more"}'),
      ),
    ).toMatchObject({
      stop: { reason: 'done' },
      decision: 'block',
    })
  })
})

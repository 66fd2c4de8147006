/**
 * `resolveProvider`: model selection, keys and base URLs from files and the environment, and
 * errors that say what to set. Requests go to a local server only.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/core/index.js'
import { resolveProvider } from '../../src/runtime/provider-from-config.js'
import { collect, requestOf } from '../providers/support/collect.js'
import { fixture, startWireServer, type WireServer } from '../providers/support/wire-server.js'

let server: WireServer
beforeAll(async () => {
  server = await startWireServer()
})
afterAll(() => server.close())

const made: string[] = []
afterEach(() => {
  server.requests.length = 0
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
})

function place(env: Record<string, string> = {}) {
  const root = mkdtempSync(join(tmpdir(), 'rudder-resolve-'))
  made.push(root)
  const home = join(root, 'home')
  const cwd = join(root, 'project')
  mkdirSync(home, { recursive: true })
  mkdirSync(cwd, { recursive: true })
  return {
    home,
    cwd,
    env,
    userFile: join(home, '.rudder', 'config.json'),
    projectFile: join(cwd, '.rudder', 'config.json'),
  }
}

function write(file: string, content: unknown): void {
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, JSON.stringify(content))
}

function configErrorOf(run: () => unknown): ConfigError {
  try {
    run()
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    return error as ConfigError
  }
  throw new Error('expected a ConfigError')
}

describe('resolveProvider: model selection', () => {
  it('--model deepseek/deepseek-chat with DEEPSEEK_API_KEY: the DeepSeek endpoint, known limits', () => {
    const resolved = resolveProvider({
      ...place({ DEEPSEEK_API_KEY: 'sk-ds' }),
      model: 'deepseek/deepseek-chat',
    })
    expect(resolved.providerName).toBe('deepseek')
    expect(resolved.provider.id).toBe('deepseek')
    expect(resolved.provider.model).toBe('deepseek-chat')
    expect(resolved.baseURL).toBe('https://api.deepseek.com')
    expect(resolved.knownModel).toMatchObject({ contextWindow: 128_000 })
    expect(resolved.params).toEqual({})
  })

  it('--model beats the project file, which beats the user file', () => {
    const p = place({ OPENAI_API_KEY: 'sk-o', ANTHROPIC_API_KEY: 'sk-a', DEEPSEEK_API_KEY: 'sk-d' })
    write(p.userFile, { model: 'openai/gpt-4.1' })
    expect(resolveProvider(p).model).toBe('gpt-4.1')
    write(p.projectFile, { model: 'anthropic/claude-sonnet-5-5' })
    expect(resolveProvider(p).providerName).toBe('anthropic')
    expect(resolveProvider({ ...p, model: 'deepseek/deepseek-reasoner' }).model).toBe(
      'deepseek-reasoner',
    )
  })

  it('with no model configured, the one provider whose key is set picks its default model', () => {
    const resolved = resolveProvider(place({ ANTHROPIC_API_KEY: 'sk-a' }))
    expect(`${resolved.providerName}/${resolved.model}`).toBe('anthropic/claude-sonnet-5-5')
  })

  it('with no model and no single key, says how to choose one', () => {
    const p = place()
    const error = configErrorOf(() => resolveProvider(p))
    expect(error.message).toContain('no model selected')
    expect(error.message).toContain('--model provider/model')
    expect(error.message).toContain(p.userFile)
    expect(error.message).toContain(p.projectFile)
  })

  it('a model without its provider suggests the full name', () => {
    const error = configErrorOf(() => resolveProvider({ ...place(), model: 'gpt-4.1' }))
    expect(error.message).toContain('--model: model "gpt-4.1" must be written "provider/model"')
    expect(error.message).toContain('did you mean "openai/gpt-4.1"?')
  })

  it('an unknown provider names the source and lists the known ones', () => {
    const error = configErrorOf(() => resolveProvider({ ...place(), model: 'mistral/large' }))
    expect(error.message).toContain('--model: unknown provider "mistral"')
    expect(error.message).toContain('deepseek, anthropic, openai, ollama, vllm')
  })

  it('vllm/<org>/<model> keeps the slash in the model id and takes VLLM_BASE_URL', () => {
    const resolved = resolveProvider({
      ...place({ VLLM_BASE_URL: 'http://gpu-box:8000/v1' }),
      model: 'vllm/Qwen/Qwen3-8B',
    })
    expect(resolved.model).toBe('Qwen/Qwen3-8B')
    expect(resolved.baseURL).toBe('http://gpu-box:8000/v1')
  })

  it('ollama needs no key and defaults to localhost:11434', () => {
    const resolved = resolveProvider({ ...place(), model: 'ollama/qwen3:8b' })
    expect(resolved.baseURL).toBe('http://localhost:11434/v1')
    expect(resolved.knownModel).toBeUndefined()
  })
})

describe('resolveProvider: keys, base URLs and parameters', () => {
  it('a missing key names the variable to set and the file to use instead', () => {
    const p = place()
    const error = configErrorOf(() => resolveProvider({ ...p, model: 'deepseek/deepseek-chat' }))
    expect(error.message).toContain('no API key for deepseek (model deepseek/deepseek-chat)')
    expect(error.message).toContain('export DEEPSEEK_API_KEY=')
    expect(error.message).toContain(p.userFile)
  })

  it('apiKeyEnv naming an unset variable names the file, the key and the variable', () => {
    const p = place()
    write(p.userFile, { trustedDirectories: [realpathSync(p.cwd)] })
    write(p.projectFile, { providers: { openai: { apiKeyEnv: 'TEAM_OPENAI_KEY' } } })
    const error = configErrorOf(() => resolveProvider({ ...p, model: 'openai/gpt-4.1' }))
    expect(error.message).toContain(
      `${p.projectFile}: providers.openai.apiKeyEnv names TEAM_OPENAI_KEY, which is not set`,
    )
  })

  it('a base URL variable that is not a URL names the variable', () => {
    const error = configErrorOf(() =>
      resolveProvider({
        ...place({ OPENAI_API_KEY: 'k', OPENAI_BASE_URL: 'api.example' }),
        model: 'openai/gpt-4.1',
      }),
    )
    expect(error.message).toContain('environment variable OPENAI_BASE_URL is "api.example"')
  })

  it('a provider of your own needs api and baseURL, and says which file lacks them', () => {
    const p = place()
    write(p.userFile, { providers: { lab: { baseURL: 'http://lab:9000/v1' } } })
    const error = configErrorOf(() => resolveProvider({ ...p, model: 'lab/llama' }))
    expect(error.message).toContain(`${p.userFile}: providers.lab.api is missing`)
    write(p.userFile, {
      providers: {
        lab: {
          api: 'openai-compatible',
          baseURL: 'http://lab:9000/v1',
          models: { llama: { contextWindow: 32_768, maxOutputTokens: 4096 } },
        },
      },
    })
    const resolved = resolveProvider({ ...p, model: 'lab/llama' })
    expect(resolved.knownModel).toEqual({
      provider: 'lab',
      model: 'llama',
      contextWindow: 32_768,
      maxOutputTokens: 4096,
    })
  })

  it('the config file wins over the environment: its key, base URL and params reach the request', async () => {
    const p = place({ DEEPSEEK_API_KEY: 'sk-from-env', DEEPSEEK_BASE_URL: 'http://127.0.0.1:9/' })
    write(p.userFile, {
      model: 'deepseek/deepseek-reasoner',
      providers: { deepseek: { apiKeyEnv: 'WORK_KEY', params: { temperature: 0.3 } } },
      trustedDirectories: [realpathSync(p.cwd)],
    })
    write(p.projectFile, { providers: { deepseek: { baseURL: server.origin } } })
    const resolved = resolveProvider({ ...p, env: { ...p.env, WORK_KEY: 'sk-work' } })
    expect(resolved.params).toEqual({ temperature: 0.3 })
    server.reply({ kind: 'sse', text: fixture('openai/reasoning-deepseek.sse') })
    const parts = await collect(
      resolved.provider,
      requestOf({
        model: resolved.model,
        params: resolved.params,
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Compare.' }] },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', text: 'check both' },
              { type: 'tool-call', id: 'c1', name: 'calc', args: {} },
            ],
          },
          {
            role: 'tool',
            callId: 'c1',
            name: 'calc',
            content: [{ type: 'text', text: '0.69' }],
            isError: false,
          },
        ],
      }),
    )
    expect(parts.at(-1)).toEqual({ type: 'end', stopReason: 'stop' })
    const [request] = server.requests
    expect(request?.headers.authorization).toBe('Bearer sk-work')
    expect(request?.body).toMatchObject({ model: 'deepseek-reasoner', temperature: 0.3 })
    // DeepSeek's thinking mode needs the reasoning of a tool-calling turn sent back.
    expect((request?.body.messages as unknown[] | undefined)?.[1]).toMatchObject({
      reasoning_content: 'check both',
    })
  })
})

describe('resolveProvider: limits, and where the base URL came from', () => {
  it('names what chose the base URL: the config file, the variable, or the default', () => {
    const p = place({ OPENAI_API_KEY: 'sk', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' })
    expect(resolveProvider({ ...p, model: 'openai/gpt-4.1' })).toMatchObject({
      baseURL: 'http://127.0.0.1:9/v1',
      baseURLSource: 'OPENAI_BASE_URL',
    })
    expect(resolveProvider({ ...p, model: 'ollama/qwen3:8b' })).toMatchObject({
      baseURL: 'http://localhost:11434/v1',
      baseURLSource: "rudder's default",
    })
    // A project's base URL counts only once the user trusts the project.
    write(p.userFile, { trustedDirectories: [realpathSync(p.cwd)] })
    write(p.projectFile, { providers: { openai: { baseURL: 'http://127.0.0.1:8/v1' } } })
    expect(resolveProvider({ ...p, model: 'openai/gpt-4.1' })).toMatchObject({
      baseURL: 'http://127.0.0.1:8/v1',
      baseURLSource: p.projectFile,
    })
  })

  it('a connection error names the base URL and the file that set it', async () => {
    const gone = await startWireServer()
    await gone.close()
    const p = place({ DEEPSEEK_API_KEY: 'sk' })
    write(p.userFile, { providers: { deepseek: { baseURL: gone.origin } } })
    const { provider } = resolveProvider({ ...p, model: 'deepseek/deepseek-chat' })
    const [error] = await collect(provider, requestOf())
    expect(error).toMatchObject({ type: 'error', code: 'connection', retryable: true })
    expect(error?.type === 'error' && error.message).toContain(
      `deepseek: cannot reach ${gone.origin} (base URL from ${p.userFile}): connection refused (ECONNREFUSED).`,
    )
  })

  it("the provider's idleTimeoutMs from config reaches the adapter: a stalled stream ends", async () => {
    const p = place()
    write(p.userFile, {
      providers: { ollama: { baseURL: `${server.origin}/v1`, idleTimeoutMs: 200 } },
    })
    server.reply({ kind: 'stall', keepAlive: ': keep-alive\n\n', everyMs: 20 })
    const { provider } = resolveProvider({ ...p, model: 'ollama/qwen3:8b' })
    const [error] = await collect(provider, requestOf())
    expect(error).toMatchObject({ type: 'error', code: 'idle-timeout', retryable: true })
    expect(error?.type === 'error' && error.message).toContain('nothing arrived for 200 ms')
  })

  it('timeoutMs given for the run beats the config file', async () => {
    const p = place()
    write(p.userFile, {
      providers: { ollama: { baseURL: `${server.origin}/v1`, timeoutMs: 60_000 } },
    })
    server.reply({ kind: 'silent' })
    const { provider } = resolveProvider({ ...p, model: 'ollama/qwen3:8b', timeoutMs: 150 })
    const [error] = await collect(provider, requestOf())
    expect(error).toMatchObject({ type: 'error', code: 'timeout', retryable: true })
    expect(error?.type === 'error' && error.message).toContain('within 150 ms')
    await server.requests[0]?.clientGone
  })
})

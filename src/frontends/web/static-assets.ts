/**
 * The page's built files (Vite's output in `dist/web/`), read once at start into a table keyed
 * by URL path. Only paths in that table are served: a request path is looked up, never joined
 * onto a directory, so no `..`, encoded slash or symlink can reach another file.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, extname, join, relative, resolve, sep } from 'node:path'
import { RudderError } from '../../index.js'
import { packageJsonPath } from '../../runtime/package-version.js'

export type Asset = { readonly body: Uint8Array; readonly type: string; readonly isHashed: boolean }

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json',
}

/** Where the build puts the page: `dist/web/` of the package this file belongs to. */
export function defaultAssetsDir(): string {
  return join(dirname(packageJsonPath()), 'dist', 'web')
}

/**
 * Loads every file under `dir`. Throws `CONFIG` when the page was not built (it names the
 * command that builds it).
 */
export function loadAssets(dir: string): ReadonlyMap<string, Asset> {
  const root = resolve(dir)
  if (!existsSync(join(root, 'index.html')))
    throw new RudderError(
      'CONFIG',
      `the web page is not built (${join(root, 'index.html')} is missing); run \`npm run build\` in the rudder package`,
    )
  const assets = new Map<string, Asset>()
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.isFile() && statSync(path).size < 16 * 1024 * 1024) {
        const urlPath = `/${relative(root, path).split(sep).join('/')}`
        assets.set(urlPath, {
          body: readFileSync(path),
          type: TYPES[extname(path)] ?? 'application/octet-stream',
          isHashed: urlPath.startsWith('/assets/'),
        })
      }
    }
  }
  walk(root)
  const index = assets.get('/index.html')
  if (index) assets.set('/', index)
  return assets
}

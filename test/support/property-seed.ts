/**
 * Property tests are deterministic in CI and explore locally (issue 9 item 17): with `CI` set,
 * every `fc.assert` runs from one fixed seed (or `FC_SEED`, to replay a failure); locally each
 * run draws a new seed. fast-check prints the seed and path of any failure either way, so a
 * local find can be replayed with `FC_SEED=<seed>`.
 */
import fc from 'fast-check'

const ci = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false'
const replay = process.env.FC_SEED
if (replay !== undefined && replay !== '') fc.configureGlobal({ seed: Number(replay) })
else if (ci) fc.configureGlobal({ seed: 20_261_202 })

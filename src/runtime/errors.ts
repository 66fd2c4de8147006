/**
 * rudder's error classes for front ends that must not load the whole public index just to tell
 * one failure from another (the CLI's `--help` path, bench B10).
 */
export { ConfigError, RudderError } from '../core/errors.js'

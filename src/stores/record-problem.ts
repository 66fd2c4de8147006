/**
 * What is wrong with one stored record, before anyone has said where the record is. Loaders
 * catch it and turn it into a located error (`locate` in event-check.ts), so the common path
 * never builds location strings.
 */
export class RecordProblem extends Error {
  override name = 'RecordProblem'
  readonly code: 'LOG_CORRUPT' | 'UNKNOWN_EVENT_TYPE'
  constructor(code: 'LOG_CORRUPT' | 'UNKNOWN_EVENT_TYPE', message: string) {
    super(message)
    this.code = code
  }
}

/**
 * Errors the main program reports as one line and exit code 2 (bad input from the user:
 * a missing file, a JSON syntax error, an unknown format, an unknown command).
 *
 * @module
 */

/** Bad input to the main program. `message` is the whole line shown to the user: what, and where. */
export class CliInputError extends Error {
  override name = 'CliInputError';
}

/** A command line the load tool cannot run: printed with the usage line, exit 2. */
export class UsageError extends Error {}

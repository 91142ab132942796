import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { parse as parseYaml } from "yaml";
import type { TokenVerificationFiles, VerificationMode } from "../jwt/token-verifier.js";
import type { ApiVersion } from "../proto/api-version.js";
import { CONFIG_KEYS, type ConfigKey, type KeyType } from "./config-keys.js";
import type { GatewayAuthMode, GatewayConfig, LedgerTarget, WsCompressionMode } from "./gateway-config.js";
import { type Candidate, didYouMean, nearestNames } from "./nearest-name.js";

/** A configuration mistake, reported at start-up with the source that made it. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/** A command line the gateway cannot read: an unknown flag, a flag without its value, a positional. */
export class CommandLineError extends ConfigError {
  override name = "CommandLineError";
}

type Value = string | number | boolean;
type Settings = Partial<Record<ConfigKey, Value>>;

/** Short CLI flags for the keys one sets most. */
const FLAG_ALIASES: Record<string, ConfigKey> = {
  port: "server.port",
  address: "server.address",
  ledger: "ledger.target",
  "path-prefix": "server.path-prefix",
};

const ENV_PREFIX = "LEDGER_GATEWAY_";

function envName(key: ConfigKey): string {
  return ENV_PREFIX + envForm(key);
}

function envForm(name: string): string {
  return name.toUpperCase().replace(/[.-]/g, "_");
}

/** `server.port` -> `port`; `websocket-config.high-water-mark` -> `high-water-mark`. */
function tailsOf(key: string): string[] {
  const parts = key.split(".");
  return parts.slice(1).map((_, i) => parts.slice(i + 1).join("."));
}

/** Every key as a typo of `spell(...)` could mean it, printed by `show`. */
function keyCandidates(
  show: (key: ConfigKey, alias?: string) => string,
  spell = (s: string) => s,
): Candidate[] {
  return (Object.keys(CONFIG_KEYS) as ConfigKey[]).map((key) => {
    const alias = Object.entries(FLAG_ALIASES).find(([, k]) => k === key)?.[0];
    return {
      name: show(key, alias),
      spellings: [key, ...(alias ? [alias] : [])].map(spell),
      tails: tailsOf(key).map(spell),
    };
  });
}

export interface ConfigSources {
  argv: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  readFile?: (path: string) => string;
}

/**
 * server.workers when none is given: half the cores this process may run on (its CPU affinity),
 * 1 to 4. Measured (docs/performance.md, "Worker threads"): on 2 cores that the ledger and the
 * clients share, a second worker cost more CPU per command and answered fewer; with 8 cores of
 * its own, streams gave 2.2x / 3.3x / 5.1x one worker at 2 / 4 / 8, while submit-and-wait, bound
 * by the ledger, gave 1.25x / 1.34x / 0.98x at a CPU per command rising from 197 to 445 µs.
 */
export const defaultWorkers = (cores: number): number => Math.min(4, Math.max(1, Math.floor(cores / 2)));

/**
 * Builds the configuration from defaults, then a YAML/JSON file (`--config F`), then
 * `LEDGER_GATEWAY_*` environment variables, then CLI flags: later sources win.
 */
export function loadConfig(sources: ConfigSources): GatewayConfig {
  const { configFile, flags } = parseArgs(sources.argv);
  const settings: Settings = {};
  if (configFile !== undefined) {
    const text = readConfigFile(configFile, sources.readFile);
    Object.assign(settings, fromFile(text, configFile));
  }
  Object.assign(settings, fromEnv(sources.env));
  Object.assign(settings, flags);
  return build(settings);
}

function readConfigFile(path: string, readFile = (p: string) => readFileSync(p, "utf8")): string {
  try {
    return readFile(path);
  } catch (error) {
    throw new ConfigError(`cannot read config file ${path}: ${(error as Error).message}`);
  }
}

function parseArgs(argv: readonly string[]): { configFile?: string; flags: Settings } {
  const flags: Settings = {};
  let configFile: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (!arg.startsWith("--")) throw new CommandLineError(`unexpected argument '${arg}'`);
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    const value = eq < 0 ? argv[++i] : arg.slice(eq + 1);
    if (value === undefined) throw new CommandLineError(`flag --${name} needs a value`);
    if (name === "config") {
      configFile = value;
      continue;
    }
    const key = checkKey(FLAG_ALIASES[name] ?? name, `flag --${name}`, "flag");
    flags[key] = coerce(key, value, `flag --${name}`);
  }
  return configFile === undefined ? { flags } : { configFile, flags };
}

function fromFile(text: string, path: string): Settings {
  let document: unknown;
  try {
    document = parseYaml(text);
  } catch (error) {
    throw new ConfigError(`config file ${path} is not valid YAML or JSON: ${(error as Error).message}`);
  }
  if (document === null || document === undefined) return {};
  if (typeof document !== "object" || Array.isArray(document)) {
    throw new ConfigError(`config file ${path} must hold an object of settings`);
  }
  const settings: Settings = {};
  for (const [dotted, value] of flatten(document as Record<string, unknown>)) {
    const key = checkKey(dotted, `config file ${path}`, "file");
    settings[key] = coerce(key, value, `config file ${path}`);
  }
  return settings;
}

/** Nested objects become dotted keys; a leaf may also be written dotted (`server.port: 1`). */
function flatten(object: Record<string, unknown>, prefix = ""): [string, unknown][] {
  return Object.entries(object).flatMap(([name, value]) => {
    const key = prefix + name;
    if (value !== null && typeof value === "object" && !Array.isArray(value) && !(key in CONFIG_KEYS)) {
      return flatten(value as Record<string, unknown>, `${key}.`);
    }
    return [[key, value] as [string, unknown]];
  });
}

function fromEnv(env: ConfigSources["env"]): Settings {
  const byEnvName = new Map((Object.keys(CONFIG_KEYS) as ConfigKey[]).map((key) => [envName(key), key]));
  const settings: Settings = {};
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith(ENV_PREFIX) || value === undefined) continue;
    const key = byEnvName.get(name);
    if (key === undefined) {
      const typed = envForm(name.slice(ENV_PREFIX.length));
      const suggestions = nearestNames(
        typed,
        keyCandidates((k) => envName(k), envForm),
      );
      throw new ConfigError(
        `unknown environment variable ${name}${didYouMean(suggestions) || "; see --help for the LEDGER_GATEWAY_* names"}`,
      );
    }
    settings[key] = coerce(key, value, `environment variable ${name}`);
  }
  return settings;
}

function checkKey(key: string, source: string, form: "flag" | "file"): ConfigKey {
  if (key in CONFIG_KEYS) return key as ConfigKey;
  const candidates =
    form === "flag"
      ? [
          ...keyCandidates((k, alias) => `--${alias ?? k}`),
          { name: "--config", spellings: ["config"] },
          { name: "--help", spellings: ["help"] },
        ]
      : keyCandidates((k) => k);
  const suggestion = didYouMean(nearestNames(key, candidates));
  const known = Object.keys(CONFIG_KEYS).join(", ");
  throw new (form === "flag" ? CommandLineError : ConfigError)(
    `unknown configuration key '${key}' in ${source}${suggestion || `; known keys: ${known}`}`,
  );
}

function coerce(key: ConfigKey, raw: unknown, source: string): Value {
  const type: KeyType = CONFIG_KEYS[key].type;
  const bad = (expected: string) =>
    new ConfigError(`bad value ${JSON.stringify(raw)} for ${key} in ${source}: expected ${expected}`);
  switch (type.kind) {
    case "string":
      if (typeof raw !== "string") throw bad("a string");
      return raw;
    case "int": {
      const n =
        typeof raw === "number"
          ? raw
          : typeof raw === "string" && /^-?\d+$/.test(raw)
            ? Number(raw)
            : Number.NaN;
      if (!Number.isInteger(n) || n < type.min || n > type.max)
        throw bad(`an integer from ${type.min} to ${type.max}`);
      return n;
    }
    case "bool":
      if (typeof raw === "boolean") return raw;
      if (raw === "true" || raw === "false") return raw === "true";
      throw bad("true or false");
    case "duration":
      if (typeof raw !== "string" || parseDuration(raw) === undefined)
        throw bad("a duration such as 500ms, 1s, 2m");
      return raw;
    case "ledger":
      if (typeof raw !== "string" || parseLedger(raw) === undefined) throw bad("`embedded` or HOST:PORT");
      return raw;
    case "enum":
      if (typeof raw !== "string" || !type.values.includes(raw))
        throw bad(`one of ${type.values.join(", ")}`);
      return raw;
    case "share": {
      const text = typeof raw === "number" ? String(raw) : raw;
      if (typeof text !== "string" || !SHARE.test(text))
        throw bad("a count such as 50 or a whole percentage from 0% to 100% such as 10%");
      return text;
    }
  }
}

/** A count (`50`) or a whole percentage (`10%`, at most `100%`). */
const SHARE = /^(\d{1,10}|(100|\d{1,2})%)$/;

/** A `share` key's value as a count: a percentage of `whole`, rounded up, or the count as is. */
function resolveShare(value: string, whole: number): number {
  if (!value.endsWith("%")) return Number(value);
  return Math.ceil((whole * Number(value.slice(0, -1))) / 100);
}

const DURATION_UNITS: Record<string, number> = {
  ms: 1,
  millis: 1,
  milliseconds: 1,
  s: 1000,
  second: 1000,
  seconds: 1000,
  m: 60_000,
  minute: 60_000,
  minutes: 60_000,
  h: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000,
};

/** Milliseconds of `500ms`, `1s`, `2 minutes` (Canton's HOCON durations); undefined if malformed. */
export function parseDuration(text: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]+)\s*$/.exec(text);
  if (!match) return undefined;
  const unit = DURATION_UNITS[match[2] as string];
  return unit === undefined ? undefined : Number(match[1]) * unit;
}

function parseLedger(text: string): { host: string; port: number } | "embedded" | undefined {
  if (text === "embedded") return "embedded";
  const match = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(text);
  const port = Number(match?.[2]);
  return match && port > 0 && port < 65536 ? { host: match[1] as string, port } : undefined;
}

function build(settings: Settings): GatewayConfig {
  const get = <K extends ConfigKey>(key: K): Value | undefined => settings[key] ?? CONFIG_KEYS[key].default;
  const str = (key: ConfigKey) => get(key) as string;
  const num = (key: ConfigKey) => get(key) as number;
  const optional = (key: ConfigKey) => get(key) as string | undefined;

  const target = parseLedger(str("ledger.target"));
  let ledger: LedgerTarget;
  if (target === "embedded" || target === undefined) {
    ledger = {
      kind: "embedded",
      sandboxPort: num("sandbox.port"),
      apiVersion: str("sandbox.api-version") as ApiVersion,
    };
  } else {
    ledger = { kind: "remote", host: target.host, port: target.port };
    if (get("ledger.tls.enabled") === true) {
      ledger.tls = {};
      const ca = optional("ledger.tls.ca-cert");
      const cert = optional("ledger.tls.client-cert");
      const key = optional("ledger.tls.client-key");
      if (ca !== undefined) ledger.tls.caCert = ca;
      if (cert !== undefined) ledger.tls.clientCert = cert;
      if (key !== undefined) ledger.tls.clientKey = key;
    }
  }
  return {
    server: {
      address: str("server.address"),
      port: num("server.port"),
      pathPrefix: normalisePrefix(str("server.path-prefix")),
      requestTimeoutMs: parseDuration(str("server.request-timeout")) as number,
      drainDelayMs: parseDuration(str("server.drain-delay")) as number,
      bodyReadTimeoutMs: parseDuration(str("server.body-read-timeout")) as number,
      // Canton 3.6's name for the same bound wins where an operator's Canton configuration sets it.
      maxBodyBytes: (get("max-inbound-message-size") as number | undefined) ?? num("server.max-body-bytes"),
      workers: (get("server.workers") as number | undefined) ?? defaultWorkers(availableParallelism()),
      httpCompression:
        str("server.http-compression") === "on"
          ? { minBytes: num("server.http-compression-min-bytes") }
          : undefined,
      streamTicketTtlMs: parseDuration(str("server.stream-ticket-ttl")) as number,
      cors: corsSettings(
        str("server.cors.allowed-origins"),
        str("server.cors.allowed-methods"),
        str("server.cors.allowed-headers"),
        str("server.cors.exposed-headers"),
        parseDuration(str("server.cors.max-age")) as number,
      ),
    },
    websocket: {
      httpListMaxElementsLimit: num("websocket-config.http-list-max-elements-limit"),
      httpListWaitTimeMs: parseDuration(str("websocket-config.http-list-wait-time")) as number,
      ...watermarks(
        num("websocket-config.low-water-mark"),
        num("websocket-config.high-water-mark"),
        num("websocket-config.hard-limit"),
      ),
      writeDeadlineMs: parseDuration(str("websocket-config.write-deadline")) as number,
      maxQueryFrameBytes: num("websocket-config.max-query-frame-bytes"),
      queryFrameTimeoutMs: parseDuration(str("websocket-config.query-frame-timeout")) as number,
      upgradesPerSecond: num("websocket-config.upgrades-per-second"),
      upgradeMaxWaitMs: parseDuration(str("websocket-config.upgrade-max-wait")) as number,
      pingIntervalMs: parseDuration(str("websocket-config.ping-interval")) as number,
      streamAuthorizationRecheckMs: parseDuration(
        str("websocket-config.stream-authorization-recheck-interval"),
      ) as number,
      resumeWindowMs: parseDuration(str("websocket-config.resume-window")) as number,
      tokenRenewalsPerMinute: num("websocket-config.token-renewals-per-minute"),
      // The deprecated count's 0 ("no history") is the one meaning it keeps: a bytes' 0.
      fanoutHistoryBytes:
        get("websocket-config.fanout-history-elements") === 0
          ? 0
          : num("websocket-config.fanout-history-bytes"),
      compression: str("websocket-config.compression") as WsCompressionMode,
    },
    ledger,
    ledgerApiVersion: str("ledger.api-version") as "auto" | ApiVersion,
    ledgerConnection: {
      maxMetadataBytes: num("ledger.max-metadata-bytes"),
      keepaliveIntervalMs: positiveDuration("ledger.keepalive-interval", str),
      keepaliveTimeoutMs: positiveDuration("ledger.keepalive-timeout", str),
    },
    quotas: {
      wsConnectionsPerUser: num("limits.ws-connections-per-user"),
      wsConnectionsPerAddress: num("limits.ws-connections-per-address"),
      streamsPerUser: num("limits.streams-per-user"),
      httpInFlightPerUser: num("limits.http-in-flight-per-user"),
      commandsPerSecondPerUser: num("limits.commands-per-second-per-user"),
      commandsBurstPerUser: num("limits.commands-burst-per-user"),
    },
    ledgerStreams: ledgerStreamsConfig(
      ledgerStreamShares(
        num("limits.ledger-streams"),
        str("limits.ledger-streams-reserved-for-authorization"),
      ),
      num("limits.ledger-streams-queue"),
      positiveDuration("limits.ledger-streams-queue-timeout", str),
      str("limits.ledger-streams-per-user"),
    ),
    metrics: { enabled: get("metrics.enabled") as boolean },
    auth: { mode: str("auth.mode") as GatewayAuthMode, ...authFiles("auth", optional) },
    sandboxAuth: {
      mode: str("sandbox.auth.mode") as VerificationMode,
      ...authFiles("sandbox.auth", optional),
      maxTokenLifetimeMs: parseDuration(str("sandbox.auth.max-token-lifetime")) as number,
    },
    log: { level: str("log.level") },
  };
}

/** A duration that must not be 0: a 0 s ping interval would ping without pause. */
function positiveDuration(key: ConfigKey, str: (key: ConfigKey) => string): number {
  const ms = parseDuration(str(key)) as number;
  if (!(ms > 0)) throw new ConfigError(`${key} must be longer than 0s, not ${str(key)}`);
  return ms;
}

/**
 * The stream budget and its reserve for authorization calls. While the budget is on, the reserve
 * is at least 1 (without it, subscriptions could fill the budget and starve the probes that
 * admit and re-check subscribers: issue 35) and leaves subscriptions at least one stream. Both
 * are refused at start rather than bent: a reserve of 0 would silently give up the guarantee,
 * and a budget of 1 serves no subscription at all.
 */
function ledgerStreamShares(
  limit: number,
  reserveText: string,
): { limit: number; reservedForAuthorization: number } {
  if (limit === 0) return { limit, reservedForAuthorization: 0 };
  const reserved = resolveShare(reserveText, limit);
  const key = "limits.ledger-streams-reserved-for-authorization";
  if (reserved < 1)
    throw new ConfigError(
      `${key} must keep at least 1 stream for authorization calls while limits.ledger-streams is on (without it, subscriptions can starve them), not ${reserveText}`,
    );
  if (reserved >= limit)
    throw new ConfigError(
      `limits.ledger-streams ${limit} leaves subscriptions no stream once ${key} (${reserveText}) keeps ${reserved} for authorization calls: set limits.ledger-streams to at least ${reserved + 1}${reserveText.endsWith("%") ? "" : ` or ${key} below ${limit}`}`,
    );
  return { limit, reservedForAuthorization: reserved };
}

/**
 * The budget with each user's share of it: of the subscriptions' slots, and of what authorization
 * questions are sure to find (the reserve and their queue). At least 1 of each while the budget
 * is on: a share of 0 would refuse every stream, which is no share.
 */
function ledgerStreamsConfig(
  shares: { limit: number; reservedForAuthorization: number },
  queueLimit: number,
  queueTimeoutMs: number,
  perUserText: string,
): GatewayConfig["ledgerStreams"] {
  const { limit, reservedForAuthorization } = shares;
  const settings = { limit, reservedForAuthorization, queueLimit, queueTimeoutMs };
  if (limit === 0) return { ...settings, subscriptionsPerUser: 0, authorizationsPerUser: 0 };
  const subscriptions = limit - reservedForAuthorization;
  const subscriptionsPerUser = resolveShare(perUserText, subscriptions);
  if (subscriptionsPerUser < 1)
    throw new ConfigError(
      `limits.ledger-streams-per-user must leave each user at least 1 of the ${subscriptions} streams subscriptions may hold, not ${perUserText}`,
    );
  const questions = reservedForAuthorization + queueLimit;
  // A count is of the subscriptions' streams; its share of theirs is the user's share of questions.
  const authorizationsPerUser = Math.max(
    1,
    Math.ceil((questions * Math.min(subscriptionsPerUser, subscriptions)) / subscriptions),
  );
  // A count past the subscriptions' share is allowed: what the user holds past it can only wait.
  return { ...settings, subscriptionsPerUser, authorizationsPerUser };
}

/** The marks only make sense ordered: pause below the hard limit, resume below the pause. */
function watermarks(
  lowWaterMark: number,
  highWaterMark: number,
  hardLimit: number,
): { lowWaterMark: number; highWaterMark: number; hardLimit: number } {
  if (!(lowWaterMark <= highWaterMark && highWaterMark < hardLimit)) {
    throw new ConfigError(
      `need websocket-config.low-water-mark (${lowWaterMark}) <= high-water-mark (${highWaterMark}) < hard-limit (${hardLimit})`,
    );
  }
  return { lowWaterMark, highWaterMark, hardLimit };
}

/** The key files and claim rules under `auth.*` or `sandbox.auth.*`, only those set. */
function authFiles(
  prefix: "auth" | "sandbox.auth",
  optional: (key: ConfigKey) => string | undefined,
): Omit<TokenVerificationFiles, "mode"> {
  const entries = (
    [
      ["secret", "secret"],
      ["publicKeyFile", "public-key-file"],
      ["jwksFile", "jwks-file"],
      ["audience", "audience"],
      ["issuer", "issuer"],
    ] as const
  ).flatMap(([field, key]) => {
    const value = optional(`${prefix}.${key}`);
    return value === undefined ? [] : [[field, value] as const];
  });
  return Object.fromEntries(entries);
}

/**
 * server.cors.*: undefined when no origin is listed. An origin is what browsers send in `Origin`
 * (`scheme://host[:port]`, no path), or `*`; anything else could never match and is refused here.
 */
function corsSettings(
  origins: string,
  allowedMethods: string,
  allowedHeaders: string,
  exposedHeaders: string,
  maxAgeMs: number,
): GatewayConfig["server"]["cors"] {
  const allowedOrigins = origins
    .split(",")
    .map((origin) => origin.trim())
    .filter((origin) => origin !== "");
  if (allowedOrigins.length === 0) return undefined;
  for (const origin of allowedOrigins) {
    if (origin !== "*" && !/^[a-z][a-z0-9+.-]*:\/\/[^/?#\s]+$/i.test(origin))
      throw new ConfigError(
        `server.cors.allowed-origins: '${origin}' is no origin (scheme://host[:port], as browsers send it, or *)`,
      );
  }
  return {
    allowedOrigins,
    allowedMethods,
    allowedHeaders,
    exposedHeaders,
    maxAgeSeconds: Math.round(maxAgeMs / 1000),
  };
}

function normalisePrefix(prefix: string): string {
  const trimmed = prefix.replace(/^\/+|\/+$/g, "");
  return trimmed === "" ? "" : `/${trimmed}`;
}

/** The flags and keys, for --help. */
export function describeKeys(): string {
  return (Object.entries(CONFIG_KEYS) as [ConfigKey, (typeof CONFIG_KEYS)[ConfigKey]][])
    .map(([key, spec]) => {
      const alias = Object.entries(FLAG_ALIASES).find(([, k]) => k === key)?.[0];
      const flag = alias ? `--${alias}, --${key}` : `--${key}`;
      const def = spec.default === undefined ? "" : ` (default ${JSON.stringify(spec.default)})`;
      return `  ${flag}\n      ${spec.doc}${def}; env ${envName(key)}`;
    })
    .join("\n");
}

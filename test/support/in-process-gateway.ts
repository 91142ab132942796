import type { GatewayOptions } from "../../src/gateway.js";

/**
 * What a gateway started inside a test's process takes: upgrades outside a cork. There the
 * gateway shares its thread (and its malloc arena) with the test's clients, proxies and often its
 * sandbox, and uWebSockets.js 3.0.6's fault in a cork after an asynchronous step
 * (uNetworking/uWebSockets#1929, src/ws/corked-upgrade.ts) lost a socket (close 1006 at once) in
 * about one full run of the tests in two, failing whichever test it fell on. Uncorked is what a
 * worker falls back to after such a loss, so it is a path of the gateway's own; the corked one is
 * tested on its own (test/ws/corked-upgrade.test.ts) and in every test that starts the gateway as
 * a process (test/e2e/ws-admission.test.ts upgrades thousands there with freed memory perturbed).
 * uWS prints its corking warning on stderr for each upgrade made so.
 */
export const IN_PROCESS_GATEWAY = { corkedUpgrades: false } as const satisfies GatewayOptions;

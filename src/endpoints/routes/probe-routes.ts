import type { LedgerClient } from "../../ledger/ledger-client.js";
import type { Route } from "../route.js";

const READINESS_TIMEOUT_MS = 2_000;

/**
 * Health probes: no token, as orchestrators have none. Once `shuttingDown()` (the lame duck of a
 * SIGTERM) /readyz answers 503 whatever the ledger, so load balancers stop routing here while
 * requests are still served.
 */
export function probeRoutes(ledger: LedgerClient, shuttingDown: () => boolean): Route[] {
  return [
    {
      method: "GET",
      path: "/livez",
      operationId: "getLivez",
      summary: "Liveness: 200 while the gateway process serves requests",
      tag: "Health",
      response: { kind: "empty" },
      auth: "none",
      handle: async () => ({ kind: "empty" }),
    },
    {
      method: "GET",
      path: "/readyz",
      operationId: "getReadyz",
      summary: "Readiness: 200 when the ledger answers, 503 while it does not or the gateway shuts down",
      tag: "Health",
      response: { kind: "text" },
      auth: "none",
      // Kubernetes-style report, the form Canton's JSON API uses.
      handle: async () => {
        if (shuttingDown())
          return { kind: "text", status: 503, text: "[-] shutdown: draining\nreadyz check failed\n" };
        return (await ledger.isReady(READINESS_TIMEOUT_MS))
          ? { kind: "text", text: "[+] ledger ok\nreadyz check passed\n" }
          : { kind: "text", status: 503, text: "[-] ledger failed: not reachable\nreadyz check failed\n" };
      },
    },
  ];
}

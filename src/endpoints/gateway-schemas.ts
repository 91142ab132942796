/**
 * The JSON shapes of the gateway's own extensions, which Canton's reference schemas
 * (schemas/components.json, imported from its specs) do not have: validated and published with
 * them (schemaComponents). Stream tickets: docs/browsers.md.
 */
export const GATEWAY_SCHEMAS: Readonly<Record<string, unknown>> = {
  StreamTicket: {
    type: "object",
    required: ["ticket", "expiresAt"],
    properties: {
      ticket: { type: "string" },
      expiresAt: { type: "string", format: "date-time" },
    },
  },
  StreamTicketRenewal: {
    type: "object",
    required: ["ticket"],
    properties: { ticket: { type: "string", minLength: 1, maxLength: 256 } },
  },
  TokenRenewed: {
    type: "object",
    required: ["tokenRenewed"],
    properties: {
      tokenRenewed: {
        type: "object",
        properties: { expiresAt: { type: "string", format: "date-time" } },
      },
    },
  },
};

const PAYLOAD = "x".repeat(64);

/**
 * The JSON commands (JsCommands) the gateway's submit endpoints take to create one Bench:Tick of
 * `party` with a 64-character payload, as the bench submits them; `seq` is the tick's number.
 */
export const tickCommands = (commandId: string, party: string, seq: number) => ({
  commandId,
  actAs: [party],
  commands: [
    {
      CreateCommand: {
        templateId: "#gateway-samples:Bench:Tick",
        createArguments: { owner: party, seq: String(seq), payload: PAYLOAD },
      },
    },
  ],
});

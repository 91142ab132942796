/**
 * The contracts the submit-and-wait-for-reassignment scenario moves between two synchronizers,
 * each one step at a time: unassign from where it is to the other, then assign it there, and
 * back. A request takes a contract no other request holds; when all are held it waits for one,
 * and in the open model that wait is in its latency (as a connection's is).
 */
export interface MovingContract {
  contractId: string;
  /** Where it is assigned, or was before the unassignment in progress. */
  synchronizerId: string;
  /** Set between the unassignment and the assignment. */
  unassigned?: { reassignmentId: string; source: string; target: string };
}

export class ReassignmentPool {
  private readonly free: MovingContract[];
  private readonly waiting: ((contract: MovingContract) => void)[] = [];

  constructor(
    contracts: readonly MovingContract[],
    /** The two synchronizers the contracts go between. */
    readonly synchronizers: readonly [string, string],
  ) {
    this.free = [...contracts];
  }

  take(): Promise<MovingContract> {
    const contract = this.free.pop();
    if (contract) return Promise.resolve(contract);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  give(contract: MovingContract): void {
    const next = this.waiting.shift();
    if (next) next(contract);
    else this.free.push(contract);
  }

  /** The next step of a contract: its command for submit-and-wait-for-reassignment. */
  nextCommand(contract: MovingContract): unknown {
    if (contract.unassigned) return { AssignCommand: { value: contract.unassigned } };
    const [a, b] = this.synchronizers;
    const target = contract.synchronizerId === a ? b : a;
    return {
      UnassignCommand: {
        value: { contractId: contract.contractId, source: contract.synchronizerId, target },
      },
    };
  }

  /** Moves the contract on by the answer's event (JsUnassignedEvent, then JsAssignmentEvent). */
  advance(contract: MovingContract, answer: ReassignmentAnswer): void {
    const event = answer.reassignment?.events?.[0];
    const unassigned = event?.JsUnassignedEvent?.value;
    if (unassigned) {
      contract.unassigned = {
        reassignmentId: unassigned.reassignmentId,
        source: unassigned.source,
        target: unassigned.target,
      };
      return;
    }
    // The other event is the assignment (JsAssignmentEvent).
    if (event !== undefined && contract.unassigned) {
      contract.synchronizerId = contract.unassigned.target;
      contract.unassigned = undefined;
    }
  }
}

/** What submit-and-wait-for-reassignment answers, as far as the pool reads it. */
export interface ReassignmentAnswer {
  reassignment?: {
    events?: {
      JsUnassignedEvent?: { value: { reassignmentId: string; source: string; target: string } };
    }[];
  };
}

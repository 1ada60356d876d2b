import type { ToolHints } from '$lib/domain/events';
import { hearthError, HearthFailure } from '$lib/domain/errors';
import type { JsonObject } from '$lib/domain/json';
import type { ToolId } from '$lib/domain/tool-id';

/** What the person answers to an approval (D11, D20). */
export type ApprovalDecision = 'approve' | 'deny' | 'always';

/** The answer, with the arguments as the person edited them before approving (none: as the model sent them). */
export interface ApprovalAnswer {
  decision: ApprovalDecision;
  arguments?: JsonObject;
}

/** A call waiting for the person, as the approval card shows it. */
export interface ApprovalRequest {
  approvalId: string;
  invocationId: string;
  callId: string;
  toolId: ToolId;
  /** The native name and the call name the model used. */
  name: string;
  callName: string;
  /** Where the tool comes from (`Hearth` for builtins). */
  origin: string;
  /** The run file holding the call's full arguments. */
  argumentsRef: string;
  /** What the card shows beside the tool: its server's endpoint host, the hints the server claims. */
  hints?: ToolHints;
}

/**
 * The questions one run has put to the person. A call waits here until `decide` answers it or
 * the run is stopped; "Always allow" also holds for the rest of the run. Nothing here times
 * out: a pending approval lives as long as its run (a closed tab interrupts the run, and a
 * resumed run asks again).
 */
export class ApprovalDesk {
  readonly #pending = new Map<string, { request: ApprovalRequest; answer: (a: ApprovalAnswer) => void }>();
  readonly #always = new Set<ToolId>();

  /** Whether the person chose Always allow for this tool during this run. */
  allowed(toolId: ToolId): boolean {
    return this.#always.has(toolId);
  }

  /** Resolves with the person's decision; rejects with `agent.cancelled` when `signal` aborts. */
  ask(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.#pending.delete(request.approvalId);
        reject(
          new HearthFailure(
            hearthError('agent.cancelled', 'The run was stopped while a call waited for approval.'),
          ),
        );
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      this.#pending.set(request.approvalId, {
        request,
        answer: (answer) => {
          signal.removeEventListener('abort', onAbort);
          this.#pending.delete(request.approvalId);
          if (answer.decision === 'always') this.#always.add(request.toolId);
          resolve(answer);
        },
      });
    });
  }

  /** Answers a pending approval; false when there is none with this id (answered already, or stopped). */
  decide(approvalId: string, answer: ApprovalAnswer): boolean {
    const pending = this.#pending.get(approvalId);
    if (!pending) return false;
    pending.answer(answer);
    return true;
  }

  pending(): ApprovalRequest[] {
    return [...this.#pending.values()].map((p) => p.request);
  }
}

import { toHearthError } from '$lib/domain/errors';
import type { AutoRetentionReport, RetentionPolicy } from '$lib/domain/retention';
import type { Clock } from '$lib/ports/clock';
import type { Locks } from '$lib/ports/locks';

export interface AutoRetentionDeps {
  policy: () => Promise<RetentionPolicy>;
  /** One pass under `policy`: applies the plan as it is now and sweeps unused states. */
  prune: (policy: RetentionPolicy) => Promise<Omit<AutoRetentionReport, 'at' | 'error'>>;
  report: (report: AutoRetentionReport) => Promise<void>;
  locks: Locks;
  clock: Clock;
  /** How long after the last poke a pass starts: a burst of replies makes one pass. */
  delayMs: number;
}

const LOCK = 'hearth-retention';

/**
 * Applies the saved retention policy by itself when it says `automatic`: a little after runs
 * finish, and once when Hearth starts. One tab at a time (another tab's pass makes this one skip);
 * a pass never touches a run that is not finished, as `applyRetention` re-reads each record.
 */
export class AutoRetention {
  readonly #deps: AutoRetentionDeps;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #running: Promise<void> | null = null;
  /** Poked during a pass: another pass follows it. */
  #again = false;

  constructor(deps: AutoRetentionDeps) {
    this.#deps = deps;
  }

  /** Something finished: a pass follows after the delay, or after the pass in progress. */
  poke(): void {
    if (this.#running) {
      this.#again = true;
      return;
    }
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#pass(), this.#deps.delayMs);
  }

  /** Resolves once no pass is waiting or running (tests; a closing worker). */
  async settled(): Promise<void> {
    while (this.#running || this.#timer !== undefined) {
      if (this.#running) await this.#running;
      else await new Promise((r) => setTimeout(r, this.#deps.delayMs));
    }
  }

  #pass(): Promise<void> {
    this.#timer = undefined;
    this.#running = this.#once().finally(() => {
      this.#running = null;
      if (this.#again) {
        this.#again = false;
        this.poke();
      }
    });
    return this.#running;
  }

  async #once(): Promise<void> {
    const deps = this.#deps;
    let policy: RetentionPolicy;
    try {
      policy = await deps.policy();
    } catch {
      return;
    }
    if (!policy.automatic) return;
    await deps.locks.tryWithLock(LOCK, async () => {
      let report: AutoRetentionReport;
      try {
        report = { at: deps.clock.now(), ...(await deps.prune(policy)) };
      } catch (e) {
        const error = toHearthError(e, 'storage.failed');
        report = { at: deps.clock.now(), runs: 0, bytes: 0, events: 0, states: 0, failed: 1, error };
      }
      // Only worth remembering when it did or met something.
      if (report.runs || report.states || report.failed) await deps.report(report).catch(() => {});
    });
  }
}

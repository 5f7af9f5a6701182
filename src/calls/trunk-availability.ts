// Whether a trunk may carry a call: the OPTIONS monitor has not seen it stop
// answering, and a registration trunk is registered (issue 26 item 3). One
// view of both for trunk resolution, dialing and the API's `health`.
import type { TrunkHealthTracker } from './trunk-health.js';
import type { TrunkHealth, TrunkHealthView } from './trunk-resolution.js';
import type { TrunkRegistrations } from './trunk-registrations.js';

const NOT_CHECKED: TrunkHealthView = { status: 'unknown', checkedAt: null, lastError: null };

export class TrunkAvailability implements TrunkHealth {
  constructor(
    private readonly pings: TrunkHealthTracker | undefined,
    private readonly registrations: TrunkRegistrations,
    /** Anything else that follows the trunks (the SIP edge's trusted addresses). */
    private readonly onRefresh: () => void = () => undefined,
  ) {}

  isOffline(trunkId: string): boolean {
    return (this.pings?.isOffline(trunkId) ?? false) || this.registrations.isFailed(trunkId);
  }

  health(trunkId: string): TrunkHealthView {
    const pinged = this.pings?.health(trunkId) ?? NOT_CHECKED;
    const registration = this.registrations.view(trunkId);
    return registration ? { ...pinged, registration } : pinged;
  }

  /** Picks up trunks changed through the API now rather than at the next refresh. */
  refresh(): void {
    // The edge first: a registrar answers a REGISTER with calls at once.
    this.onRefresh();
    this.pings?.refresh();
    this.registrations.refresh();
  }
}

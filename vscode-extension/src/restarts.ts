// When the server process dies: restart it a few times, then stop and say so once, instead of a
// crash loop that floods the user with notifications. Pure, for the unit tests.

export class RestartBudget {
    private times: number[] = [];

    constructor(private readonly max: number = 3, private readonly windowMs: number = 180_000) {}

    /** Record a crash at `now`; true if the server may be started again. */
    allow(now: number): boolean {
        this.times = this.times.filter((t) => now - t < this.windowMs);
        this.times.push(now);
        return this.times.length <= this.max;
    }

    reset(): void {
        this.times = [];
    }
}

/**
 * Runs one pass of a sweep at a time. A call while a pass runs gets that pass and makes it go
 * round once more, so a wake-up arriving mid-pass is never lost and passes never overlap.
 * `settled` hears how each run ended (the error, or null) once it is over, e.g. to re-arm a timer.
 */
export class RepeatingPass {
  private current: Promise<void> | null = null;
  private again = false;

  constructor(
    private readonly pass: () => Promise<void>,
    private readonly settled: (error: unknown) => void
  ) {}

  /** The run under way, or null. */
  get running(): Promise<void> | null {
    return this.current;
  }

  run(): Promise<void> {
    if (this.current) {
      this.again = true;
      return this.current;
    }
    this.current = (async () => {
      let failure: unknown = null;
      try {
        do {
          this.again = false;
          await this.pass();
        } while (this.again);
      } catch (error) {
        failure = error;
      } finally {
        this.current = null;
        this.settled(failure);
      }
    })();
    return this.current;
  }
}

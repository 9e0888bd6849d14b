// Functions registered by name, as VERL's register_adv_est / register_policy_loss: adding an algorithm is one
// function plus one registry line, and an unknown name fails naming the known ones.

/** A name → function table, fixed when built. */
export class Registry<F> {
  readonly #entries: Map<string, F>;

  /** `field` names the config field that selects an entry (used in errors), e.g. "advEstimator". */
  constructor(readonly field: string, entries: [string, F][]) {
    this.#entries = new Map(entries);
  }

  /** The function registered as `name`; throws naming the known ones. */
  get(name: string): F {
    const fn = this.#entries.get(name);
    if (!fn) throw new RangeError(`${this.field} is '${name}'; expected ${this.names().join(", ")}`);
    return fn;
  }

  /** Registered names, in registration order. */
  names(): string[] {
    return [...this.#entries.keys()];
  }
}

import {AppError} from "../shared/errors.js";

/** A target as a name resolves to it: what it is, its uuid, its name. */
export interface NamedTarget {
  kind: string;
  uuid: string;
  name: string;
}

/**
 * One kind of thing a name may name (recipients, groups, schedules; escalation policies can add
 * themselves): its word for people ("schedule") and its entries at the moment of asking.
 */
export interface TargetKind {
  kind: string;
  entries: () => Array<{uuid: string; name: string | null}>;
}

/** Names compare as people type them: case and surrounding or repeated blanks do not matter. */
function comparable(name: string): string {
  return name.trim().replace(/\s+/g, " ").toLowerCase();
}

/**
 * The one resolver both CLIs and the API use for "a target by name or uuid": a uuid is taken as
 * it is; a name must name exactly one target across every kind, or the answer lists the matches.
 */
export class TargetNames {
  private readonly kinds: TargetKind[];

  constructor(kinds: TargetKind[]) {
    this.kinds = [...kinds];
  }

  /** Another kind of target (e.g. escalation policies), looked up after those already known. */
  add(kind: TargetKind): void {
    this.kinds.push(kind);
  }

  /** Every target, for pickers: recipients, groups, schedules (and any added kind), each by name. */
  list(): NamedTarget[] {
    return this.kinds.flatMap((kind) =>
      kind.entries().map((entry) => ({kind: kind.kind, uuid: entry.uuid, name: entry.name ?? ""}))
    );
  }

  /**
   * The target `ref` names: its uuid, else its name. None is not_found; two or more named alike
   * is ambiguous_name, listing each match with its kind and uuid so the caller can pick one.
   */
  resolve(ref: string): NamedTarget {
    const all = this.list();
    const byUuid = all.find((target) => target.uuid === ref);
    if (byUuid) return byUuid;
    const wanted = comparable(ref);
    const matches = wanted ? all.filter((target) => comparable(target.name) === wanted) : [];
    if (matches.length === 1) return matches[0];
    const kinds = this.kinds.map(({kind}) => kind);
    if (!matches.length)
      throw new AppError(
        "not_found",
        `no ${kinds.slice(0, -1).join(", ")} or ${kinds.at(-1)} has the uuid or name "${ref}"`
      );
    const listed = matches.map((target) => `${target.kind} "${target.name}" (${target.uuid})`).join(", ");
    throw new AppError(
      "ambiguous_name",
      `"${ref}" names ${matches.length} targets: ${listed}; give the uuid of the one you mean`
    );
  }
}

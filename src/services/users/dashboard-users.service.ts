import {randomBytes} from "node:crypto";
import type {Actor} from "../../domain/actor.js";
import type {Role} from "../../domain/roles.js";
import {isoTimestamp, type Clock} from "../../lib/clock.js";
import {hashPassword, verifyPassword} from "../../lib/password-hash.js";
import type {DashboardUserRecord} from "../../store/config/config-store.js";
import type {DashboardUsersRepository, RecipientsRepository} from "../../store/config/repositories.js";
import type {AuditService} from "../shared/audit.service.js";
import {AppError, notFound, refuseReadOnlyFields, unknownReference} from "../shared/errors.js";

/** A user as the API shows it: everything but the password hash. */
export type DashboardUserView = Omit<DashboardUserRecord, "password_hash">;

export function describeUser({password_hash: _hash, ...visible}: DashboardUserRecord): DashboardUserView {
  return visible;
}

export interface NewUser {
  name: string;
  role: Role;
  password: string;
  recipient_uuid?: string | null;
}

/** What an admin may change of a user besides the password (which has its own call). */
export interface UserChange {
  name?: string;
  role?: Role;
  recipient_uuid?: string | null;
}
const CHANGEABLE = ["name", "role", "recipient_uuid"];

export interface DashboardUsersDependencies {
  users: DashboardUsersRepository;
  recipients: RecipientsRepository;
  audit: AuditService;
  clock: Clock;
}

/**
 * The people who sign in to the dashboard, each with a role and optionally the recipient they are.
 * There is always at least one admin once the first is made: the last one cannot be demoted or
 * deleted, so nobody can lock the box's owners out of it through the API.
 */
export class DashboardUsersService {
  constructor(private readonly deps: DashboardUsersDependencies) {}

  get any(): boolean {
    return this.deps.users.all().length > 0;
  }

  list(): DashboardUserView[] {
    return this.deps.users.all().map(describeUser);
  }

  get(id: string): DashboardUserRecord {
    const user = this.deps.users.get(id);
    if (!user) throw notFound("user", id);
    return user;
  }

  find(id: string): DashboardUserRecord | null {
    return this.deps.users.get(id);
  }

  named(name: string): DashboardUserRecord | null {
    return this.deps.users.named(name);
  }

  /** The name the person goes by where alerts are concerned: their recipient's, else their own. */
  personOf(user: DashboardUserRecord): string {
    const recipient = user.recipient_uuid ? this.deps.recipients.get(user.recipient_uuid) : null;
    return recipient?.name ?? user.name;
  }

  /** The user whose name and password these are, or null; the same work is done for an unknown name. */
  async verify(name: string, password: string): Promise<DashboardUserRecord | null> {
    const user = this.named(name);
    const matches = await verifyPassword(password, user?.password_hash ?? UNKNOWN_USER_HASH);
    return user && matches ? user : null;
  }

  async create(input: NewUser, actor: Actor): Promise<DashboardUserView> {
    this.refuseTakenName(input.name, null);
    this.refuseUnknownRecipient(input.recipient_uuid ?? null);
    const now = isoTimestamp(this.deps.clock.now());
    const user: DashboardUserRecord = {
      id: `usr_${randomBytes(6).toString("hex")}`,
      name: input.name.trim(),
      role: input.role,
      recipient_uuid: input.recipient_uuid ?? null,
      password_hash: await hashPassword(input.password),
      password_set_at: now,
      created_at: now,
      updated_at: now
    };
    await this.deps.users.insert(user);
    await this.audit(actor, "user.created", user, {role: user.role, recipient_uuid: user.recipient_uuid});
    return describeUser(user);
  }

  async update(id: string, change: UserChange, actor: Actor): Promise<DashboardUserView> {
    refuseReadOnlyFields(change as Record<string, unknown>, CHANGEABLE);
    const current = this.get(id);
    if (change.name !== undefined) this.refuseTakenName(change.name, id);
    if (change.recipient_uuid !== undefined) this.refuseUnknownRecipient(change.recipient_uuid);
    const now = isoTimestamp(this.deps.clock.now());
    const updated = await this.deps.users.modify(id, (stored) => {
      const next = {...stored, ...change, name: (change.name ?? stored.name).trim(), updated_at: now};
      if (stored.role === "admin" && next.role !== "admin") this.refuseLastAdmin(id, "demote");
      return next;
    });
    if (!updated) throw notFound("user", id);
    await this.audit(actor, "user.updated", updated, {...change, from_role: current.role});
    return describeUser(updated);
  }

  /** A new password: the user's open sessions end (they were signed in with the old one). */
  async setPassword(id: string, password: string, actor: Actor): Promise<DashboardUserView> {
    const hash = await hashPassword(password);
    const now = isoTimestamp(this.deps.clock.now());
    const updated = await this.deps.users.modify(id, (stored) => ({
      ...stored,
      password_hash: hash,
      password_set_at: now,
      updated_at: now
    }));
    if (!updated) throw notFound("user", id);
    await this.audit(actor, "user.password_set", updated, {});
    return describeUser(updated);
  }

  async remove(id: string, actor: Actor): Promise<void> {
    const user = this.get(id);
    if (user.role === "admin") this.refuseLastAdmin(id, "delete");
    await this.deps.users.remove(id);
    await this.audit(actor, "user.deleted", user, {});
  }

  private refuseTakenName(name: string, ownId: string | null): void {
    const holder = this.named(name);
    if (holder && holder.id !== ownId)
      throw new AppError("conflict", `a user named ${holder.name} exists already`, {
        errors: [{pointer: "/name", detail: "taken by another user (names are compared regardless of case)"}]
      });
  }

  private refuseUnknownRecipient(uuid: string | null): void {
    if (uuid !== null && !this.deps.recipients.get(uuid))
      throw unknownReference("/recipient_uuid", `recipient ${uuid} does not exist`);
  }

  private refuseLastAdmin(id: string, what: "demote" | "delete"): void {
    const others = this.deps.users.all().filter((user) => user.role === "admin" && user.id !== id);
    if (others.length === 0)
      throw new AppError("conflict", `cannot ${what} the last admin: make another user admin first`);
  }

  private audit(actor: Actor, action: string, user: DashboardUserRecord, detail: Record<string, unknown>) {
    return this.deps.audit.record(actor, action, {type: "dashboard_user", id: user.id}, {name: user.name, ...detail});
  }
}

// A real hash of a password nobody has, so a sign-in with an unknown name costs as much as one with a wrong password.
const UNKNOWN_USER_HASH = "scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";

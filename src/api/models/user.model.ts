import {
  AdditionalProperties,
  CollectionOf,
  Description,
  Enum,
  MaxLength,
  MinLength,
  Nullable,
  Pattern,
  Required
} from "@tsed/schema";
import {ROLES} from "../../domain/roles.js";
import {MIN_PASSWORD_LENGTH, USER_NAME_MAX, USER_NAME_PATTERN} from "./dashboard.model.js";

const ROLE_WORDS =
  "admin: everything; operator: read, acknowledge and resolve, maintenance windows, schedule overrides, test pages; viewer: read";

@AdditionalProperties(false)
export class CreateUserModel {
  @Required()
  @MinLength(1)
  @MaxLength(USER_NAME_MAX)
  @Pattern(USER_NAME_PATTERN)
  @Description("What the person types to sign in and the audit log shows; unique regardless of case")
  name: string;
  @Required() @Enum(...ROLES) @Description(ROLE_WORDS) role: string;
  @Required() @MinLength(MIN_PASSWORD_LENGTH) @MaxLength(256) @Description("Never shown again") password: string;
  @Nullable(String)
  @Description("The recipient this person is: their dashboard acknowledgements are recorded under that name")
  recipient_uuid?: string | null;
}

@AdditionalProperties(false)
export class UpdateUserModel {
  @MinLength(1) @MaxLength(USER_NAME_MAX) @Pattern(USER_NAME_PATTERN) name?: string;
  @Enum(...ROLES) @Description(ROLE_WORDS) role?: string;
  @Nullable(String) recipient_uuid?: string | null;
}

@AdditionalProperties(false)
export class SetUserPasswordModel {
  @Required() @MinLength(MIN_PASSWORD_LENGTH) @MaxLength(256) password: string;
}

export class UserModel {
  @Required() id: string;
  @Required() name: string;
  @Required() @Enum(...ROLES) role: string;
  @Required() @Nullable(String) recipient_uuid: string | null;
  @Required()
  @Description("When the password was last set; sessions signed in with an earlier one have ended")
  password_set_at: string;
  @Required() created_at: string;
  @Required() updated_at: string;
}

export class UserListModel {
  @Required() @CollectionOf(UserModel) items: UserModel[];
}

import {AdditionalProperties, Description, MaxLength, MinLength, Pattern, Required} from "@tsed/schema";

/** A user's name: what they type at sign-in, shown in the audit log. Not blank, no line breaks. */
export const USER_NAME_MAX = 80;
export const USER_NAME_PATTERN = /^\S(.*\S)?$/;

/** Long enough to resist guessing under the sign-in rate limit; a passphrase fits easily. */
export const MIN_PASSWORD_LENGTH = 10;

@AdditionalProperties(false)
export class SetPasswordModel {
  @Required()
  @MinLength(1)
  @MaxLength(300)
  @Description("An active admin API key, e.g. the one in data/initial-admin-key")
  admin_key: string;
  @MinLength(1)
  @MaxLength(USER_NAME_MAX)
  @Pattern(USER_NAME_PATTERN)
  @Description('The user to set the password of, or to make as an admin when none has this name; "admin" when absent')
  name?: string;
  @Required() @MinLength(MIN_PASSWORD_LENGTH) @MaxLength(256) password: string;
}

@AdditionalProperties(false)
export class SignInModel {
  @MinLength(1)
  @MaxLength(USER_NAME_MAX)
  @Description('"admin" when absent (the one admin of releases before named users)')
  name?: string;
  @Required() @MinLength(1) @MaxLength(256) password: string;
}

import {AdditionalProperties, Description, MaxLength, MinLength, Required} from "@tsed/schema";

/** Long enough to resist guessing under the sign-in rate limit; a passphrase fits easily. */
export const MIN_PASSWORD_LENGTH = 10;

@AdditionalProperties(false)
export class SetPasswordModel {
  @Required()
  @MinLength(1)
  @MaxLength(300)
  @Description("An active admin API key, e.g. the one in data/initial-admin-key")
  admin_key: string;
  @Required() @MinLength(MIN_PASSWORD_LENGTH) @MaxLength(256) password: string;
}

@AdditionalProperties(false)
export class SignInModel {
  @Required() @MinLength(1) @MaxLength(256) password: string;
}

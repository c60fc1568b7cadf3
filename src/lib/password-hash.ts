import {randomBytes, scrypt, timingSafeEqual, type ScryptOptions} from "node:crypto";

// scrypt's recommended interactive cost (N=2^15, r=8, p=1): about 50-100 ms and 32 MiB per try on
// a small box, which is what makes an offline guess of a stolen config file expensive.
const COST = {N: 2 ** 15, r: 8, p: 1};
const KEY_BYTES = 32;
const SALT_BYTES = 16;
const PREFIX = "scrypt";

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // maxmem above 128 * N * r bytes, or Node refuses the cost above.
    scrypt(
      password.normalize("NFC"),
      salt,
      KEY_BYTES,
      {...options, maxmem: 256 * options.N! * options.r!},
      (error, key) => (error ? reject(error) : resolve(key))
    );
  });
}

/**
 * A self-describing scrypt hash, `scrypt$N$r$p$<salt b64>$<key b64>`, so the cost can be raised
 * later without breaking passwords already stored.
 */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, COST);
  return [PREFIX, COST.N, COST.r, COST.p, salt.toString("base64"), key.toString("base64")].join("$");
}

/** Whether `password` matches a stored hash; false for anything that is not such a hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [prefix, n, r, p, salt, key] = stored.split("$");
  if (prefix !== PREFIX || !salt || !key) return false;
  const expected = Buffer.from(key, "base64");
  const actual = await derive(password, Buffer.from(salt, "base64"), {N: Number(n), r: Number(r), p: Number(p)});
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

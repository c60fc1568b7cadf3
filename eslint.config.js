// `npm run lint`: typescript-eslint with type information over src/, test/ and bench/. The rules
// that need the type checker (a promise left floating, a thenable awaited by mistake, `any`
// flowing into typed code) are the ones that catch real bugs; style is Prettier's job.
import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {ignores: ["dist/", "release/", "coverage/", ".nodes/", ".venv/", ".ci-out/", "data/", "sdk/"]},
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {projectService: {allowDefaultProject: ["vitest.config.ts"]}, tsconfigRootDir: import.meta.dirname}
    },
    rules: {
      // `_name` marks a parameter a signature needs but the body does not use.
      "@typescript-eslint/no-unused-vars": [
        "error",
        {argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none"}
      ],
      // The AT layer and SMS texts match control characters (Ctrl-Z, ESC) on purpose.
      "no-control-regex": "off"
    }
  },
  {
    // Dependencies as one named object (DESIGN rule 15): a constructor or function that needs more
    // than four things takes them by name, so a call reads without counting positions.
    files: ["src/**/*.ts"],
    rules: {"@typescript-eslint/max-params": ["error", {max: 4}]}
  },
  {
    // No file over 400 lines (DESIGN rule 11): a file that outgrows it holds two things; split it
    // where they part rather than squeeze lines. The dashboard's browser modules count too.
    files: ["src/**/*.ts", "src/**/*.js"],
    rules: {"max-lines": ["error", {max: 400}]}
  },
  {
    // A Ts.ED handler takes each request part (a query field, a header) as its own decorated
    // parameter, which is also how each is documented; folding them into one object would need a
    // query model with other validation. These are bindings, not dependencies.
    files: ["src/api/controllers/*.controller.ts"],
    rules: {"@typescript-eslint/max-params": "off"}
  },
  {
    // Tests read JSON answers, whose type is what the test checks: `any` there is the point.
    files: ["test/**"],
    rules: {
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-return": "off",
      "@typescript-eslint/no-explicit-any": "off"
    }
  },
  {
    // Plain JavaScript (the dashboard's browser modules, the bench and build scripts): no types to check.
    files: ["**/*.js", "**/*.mjs", "**/*.cjs"],
    ...tseslint.configs.disableTypeChecked
  },
  {files: ["src/dashboard/public/**/*.js", "src/api/docs-ui/*.js"], languageOptions: {globals: globals.browser}},
  {files: ["bench/**", "src/cli/build.mjs", "*.js", "*.cjs"], languageOptions: {globals: globals.node}}
);

// ESLint 9 flat config for the whole monorepo (`npm run lint` runs `eslint .` from the root;
// each package's `eslint src test` finds this file by walking up from its cwd).
//
// - typescript-eslint `recommended` (no type information, for speed) plus a few house rules;
// - `@effect/dprint`: Effect's own formatter settings, reported (and `--fix`ed) as lint errors;
// - determinism: core and sandbox get time and randomness from Effect's `Clock`/`Random` only;
// - layering: core ← adapter-* ← providers ← api, sandbox ← http; imports may only point left.
import effect from "@effect/eslint-plugin"
import { defineConfig, globalIgnores } from "eslint/config"
import { builtinModules } from "node:module"
import tseslint from "typescript-eslint"

/** What `eslint .` lints. */
const files = [
  "packages/*/src/**/*.ts",
  "packages/*/src/**/*.tsx",
  "packages/*/test/**/*.ts",
  "scripts/**/*.ts",
  "scripts/**/*.mjs",
  "bench/**/*.mjs",
  "*.ts",
  "eslint.config.mjs"
]

/**
 * Builds `no-restricted-imports` options from [gitignore-style patterns, reason] pairs and
 * optional exact module names (exact, so that `util` cannot match some `lib/util` subpath).
 */
const restrictImports = (groups, paths = []) => [
  "error",
  { paths, patterns: groups.map(([group, message]) => ({ group, message })) }
]

/** Node built-ins imported without the `node:` prefix (`fs`, `fs/promises`, …). */
const bareBuiltins = builtinModules
  .filter((name) => !name.startsWith("node:"))
  .map((name) => ({ name, message: "core does no I/O: no Node built-ins." }))

export default defineConfig(
  globalIgnores([
    "**/dist/**",
    "**/build/**",
    "**/node_modules/**",
    "**/.turbo/**",
    "scratchpad/**",
    "**/coverage/**",
    // Written by `npm run sdk:generate` (openapi-typescript); a test keeps it in step with the API.
    "packages/client/src/generated/**"
  ]),
  {
    files,
    extends: [tseslint.configs.recommended],
    linterOptions: { reportUnusedDisableDirectives: "error" },
    plugins: { "@effect": effect },
    rules: {
      "@typescript-eslint/consistent-type-imports": ["error", {
        prefer: "type-imports",
        fixStyle: "separate-type-imports"
      }],
      "@typescript-eslint/array-type": ["error", { default: "generic", readonly: "generic" }],
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-unused-vars": ["error", {
        argsIgnorePattern: "^_",
        varsIgnorePattern: "^_",
        caughtErrorsIgnorePattern: "^_",
        destructuredArrayIgnorePattern: "^_"
      }],
      "@typescript-eslint/no-non-null-assertion": "off",
      // `interface X extends Schema.Schema.Type<typeof X> {}` is the Effect idiom.
      "@typescript-eslint/no-empty-object-type": "off",
      "@effect/dprint": ["error", {
        config: {
          indentWidth: 2,
          lineWidth: 120,
          semiColons: "asi",
          quoteStyle: "alwaysDouble",
          trailingCommas: "never",
          operatorPosition: "maintain",
          "arrowFunction.useParentheses": "force"
        }
      }]
    }
  },
  // dprint owns layout: switch off any core/stylistic rule that would fight it.
  ...effect.configs.dprint.filter((config) => !config.plugins).map((config) => ({ ...config, files })),
  // Determinism: results must be reproducible from a seed and a TestClock.
  {
    files: ["packages/core/src/**/*.ts", "packages/sandbox/src/**/*.ts"],
    rules: {
      "no-restricted-properties": ["error", {
        object: "Math",
        property: "random",
        message: "Nondeterministic: use Effect's `Random` service (Random.next, Random.nextIntBetween, …)."
      }, {
        object: "Date",
        property: "now",
        message: "Nondeterministic: use Effect's `Clock` service (Clock.currentTimeMillis) or DateTime.now."
      }],
      "no-restricted-syntax": ["error", {
        selector: "NewExpression[callee.name='Date'][arguments.length=0]",
        message:
          "Nondeterministic: `new Date()` reads the wall clock; use Effect's `Clock` (DateTime.now / Clock.currentTimeMillis)."
      }, {
        selector: "CallExpression[callee.name='Date']",
        message:
          "Nondeterministic: `Date()` reads the wall clock; use Effect's `Clock` (DateTime.now / Clock.currentTimeMillis)."
      }]
    }
  },
  // Layering. Each block replaces the previous `no-restricted-imports` options, so the globs must not overlap.
  {
    files: ["packages/core/src/**/*.ts"],
    rules: {
      "no-restricted-imports": restrictImports([
        [["node:*"], "core does no I/O: no Node built-ins."],
        [["@effect/platform", "@effect/platform*"], "core does no I/O: no @effect/platform*."],
        [["@effect/sql", "@effect/sql*"], "core does no I/O: no @effect/sql*."],
        [["@tracebridge/*"], "core depends on nothing of ours (core ← adapters ← sandbox ← http)."]
      ], bareBuiltins)
    }
  },
  {
    files: ["packages/adapter-*/src/**/*.ts"],
    rules: {
      "no-restricted-imports": restrictImports([
        [
          ["@tracebridge/sandbox", "@tracebridge/http"],
          "adapters may import @tracebridge/core only (core ← adapters ← sandbox ← http)."
        ],
        [["@effect/sql", "@effect/sql*"], "adapters do not persist: no @effect/sql*."],
        [
          ["@effect/platform-node", "@effect/platform-node*"],
          "adapters stay runtime-neutral: use @effect/platform, not @effect/platform-node*."
        ]
      ])
    }
  },
  {
    files: ["packages/providers/src/**/*.ts"],
    rules: {
      "no-restricted-imports": restrictImports([
        [
          ["@tracebridge/sandbox", "@tracebridge/http", "@tracebridge/api"],
          "the catalog may import @tracebridge/core and the adapters only (core ← adapters ← providers ← api, sandbox ← http)."
        ],
        [["@effect/sql", "@effect/sql*"], "the catalog does not persist: no @effect/sql*."],
        [["@effect/platform-node", "@effect/platform-node*"], "the catalog stays runtime-neutral."]
      ])
    }
  },
  {
    files: ["packages/api/src/**/*.ts"],
    rules: {
      "no-restricted-imports": restrictImports([
        [
          ["@tracebridge/sandbox", "@tracebridge/http", "@tracebridge/adapter-*", "@tracebridge/sync"],
          "the contract depends on @tracebridge/core and the catalog (@tracebridge/providers) only (ADR 0022)."
        ],
        [["@effect/sql", "@effect/sql*"], "the contract does not persist: no @effect/sql*."],
        [["@effect/platform-node", "@effect/platform-node*"], "the contract serves nothing: no @effect/platform-node*."]
      ])
    }
  },
  {
    files: ["packages/client/src/**/*.ts"],
    rules: {
      "no-restricted-imports": restrictImports([
        [["node:*"], "the SDK runs in browsers too: no Node built-ins (use fetch and Web Crypto)."],
        [["@tracebridge/*"], "the SDK stands alone: it depends on nothing of ours."],
        [["effect", "effect/*", "@effect/*"], "the SDK is plain TypeScript: no Effect."]
      ], bareBuiltins.map((b) => ({ ...b, message: "the SDK runs in browsers too: no Node built-ins." })))
    }
  },
  {
    files: ["packages/sandbox/src/**/*.ts"],
    rules: {
      "no-restricted-imports": restrictImports([
        [["@tracebridge/http"], "sandbox must not import http (core ← adapters ← sandbox ← http)."],
        [["@effect/sql", "@effect/sql*"], "sandbox does not persist: no @effect/sql*."]
      ])
    }
  }
)

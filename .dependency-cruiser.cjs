// The layer rules of docs/architecture.md ("Layers"), checked by `npm run depcheck` in the test
// command. Each rule names a layer and lists the only folders it may import; anything else is an
// import running up a layer (or sideways into a part that is not its contract), which is an error.
//
//   composition root  main.ts, server.ts, boot/               (nothing imports these but each other)
//   edge              api/ -> dashboard/, ops/ (its HTTP face) cli/ -> ops/ (restore)
//   services level    outbox/, ops/ -> services/
//                     services/ -> channels/ (contract only), store/, domain/, settings/, lib/
//   drivers           channels/ -> modem/, store/ (their own state only), domain/, settings/, lib/
//                     inbound/ -> domain/, settings/, lib/ (listeners hand messages to an injected handler)
//   store             store/ -> domain/, settings/, lib/
//   bottom            domain/ (pure), settings/ -> lib/, lib/ (imports nothing of ours)
//
// No two layers may import each other, so the top-level folders cannot form a cycle;
// `no-circular` (files) and `no-folder-circular` catch circles inside a layer as well.

/** Any of our modules outside these folders: what a layer listing them as its own may not import. */
const outside = (...folders) => `^src/(?!(${folders.join("|")})/)`;

// The lib modules with no state, no clock and no I/O: the only ones domain/ may use.
const PURE_LIB = ["src/lib/redact\\.ts$", "src/lib/retry-policy\\.ts$", "src/lib/html\\.ts$"];

// A driver that must remember something durably does it through a journal repository of its own.
const CHANNEL_STATE = [
  "src/store/journal/journal\\.ts$",
  "src/store/journal/telegram-[a-z-]+\\.repository\\.ts$",
  "src/store/journal/(sms-reply-codes|inbound-sms)\\.repository\\.ts$"
];

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "A file circle: split out what both sides need, usually a type, into a file of its own.",
      from: {path: "^src/"},
      to: {circular: true}
    },
    {
      name: "no-folder-circular",
      severity: "error",
      comment: "Two folders import each other: one of them must sit below the other.",
      scope: "folder",
      from: {path: "^src/"},
      to: {circular: true}
    },
    {
      name: "no-orphans",
      severity: "error",
      comment: "A module that neither imports nor is imported by anything is dead code (entry points import, so pass).",
      // Except the /docs page's start script: a browser file the page loads, named in docs-ui.ts.
      from: {orphan: true, pathNot: "^src/api/docs-ui/start-swagger-ui\\.js$"},
      to: {}
    },
    {
      name: "composition-root",
      severity: "error",
      comment:
        "main.ts, server.ts and boot/ (the gateway's assembly, the standby role, the device transports) wire the gateway; nothing below them may import them.",
      from: {pathNot: ["^src/main\\.ts$", "^src/boot/"]},
      to: {path: ["^src/(main|server)\\.ts$", "^src/boot/"]}
    },
    {
      name: "domain-is-pure",
      severity: "error",
      comment: "domain/ imports only domain/ and the pure lib modules (rule 1).",
      from: {path: "^src/domain/"},
      to: {path: "^src/(?!domain/)", pathNot: PURE_LIB}
    },
    {
      name: "domain-has-no-io",
      severity: "error",
      comment: "domain/ is functions of (state, event, now): no Node module and no package (rule 1).",
      from: {path: "^src/domain/"},
      to: {dependencyTypes: ["core", "npm", "npm-dev", "npm-optional", "npm-peer", "npm-no-pkg", "npm-unknown"]}
    },
    {
      name: "lib-is-the-floor",
      severity: "error",
      comment: "lib/ holds helpers every layer may use, so it imports nothing else of ours.",
      from: {path: "^src/lib/"},
      to: {path: "^src/(?!lib/)"}
    },
    {
      name: "settings-above-lib-only",
      severity: "error",
      comment: "settings/ (defaults, loader) may use lib/ and nothing else of ours.",
      from: {path: "^src/settings/"},
      to: {path: outside("settings", "lib")}
    },
    {
      name: "store-below-services",
      severity: "error",
      comment: "store/ sees domain/ records, settings and lib/; never the services or drivers that use it.",
      from: {path: "^src/store/"},
      to: {path: outside("store", "domain", "settings", "lib")}
    },
    {
      name: "modem-below-channels",
      severity: "error",
      comment: "modem/ is the AT layer the voice and SMS drivers use; it keeps no journal state.",
      from: {path: "^src/modem/"},
      to: {path: outside("modem", "domain", "settings", "lib")}
    },
    {
      name: "inbound-is-a-driver-floor",
      severity: "error",
      comment:
        "inbound/ (email, MQTT, SNMP listeners) parses bytes into messages for an injected handler; the composition root wires it to the services.",
      from: {path: "^src/inbound/"},
      to: {path: outside("inbound", "domain", "settings", "lib")}
    },
    {
      name: "channels-below-services",
      severity: "error",
      comment: "Drivers see the modem, their own store, domain/, settings and lib/; never a use case or the edge.",
      from: {path: "^src/channels/"},
      to: {path: outside("channels", "modem", "store", "domain", "settings", "lib")}
    },
    {
      name: "channels-keep-only-their-own-state",
      severity: "error",
      comment: "A driver writes only its own journal repositories (Telegram offsets, buttons, relay; SMS reply codes).",
      from: {path: "^src/channels/"},
      to: {path: "^src/store/", pathNot: CHANNEL_STATE}
    },
    {
      name: "services-below-the-edge",
      severity: "error",
      comment: "Use cases see store/, channels/, domain/, settings and lib/; never outbox/, ops/ or the edge.",
      from: {path: "^src/services/"},
      to: {path: outside("services", "channels", "store", "domain", "settings", "lib")}
    },
    {
      name: "services-see-the-channel-contract",
      severity: "error",
      comment: "Services know channels only by their contract (channel.ts) and the registry, never a driver.",
      from: {path: "^src/services/"},
      to: {path: "^src/channels/", pathNot: ["^src/channels/channel\\.ts$", "^src/channels/channel-registry\\.ts$"]}
    },
    {
      name: "auditor-is-independent",
      severity: "error",
      comment:
        "The paging auditor (DESIGN rule 13) reads only the journal, through its own repository, and the clock: no code of the planner, the runner, the notifications service or any channel, so a fault in them cannot hide from it.",
      from: {path: "^src/services/auditor/"},
      to: {
        path: [
          "^src/services/(?!auditor/)",
          "^src/domain/(escalation/|recipient\\.ts$|policy\\.ts$)",
          "^src/channels/",
          "^src/store/(?!journal/(journal|paging-audit\\.repository)\\.ts$)"
        ]
      }
    },
    {
      name: "runner-does-not-call-the-owner",
      severity: "error",
      comment:
        "One owner of the alert lifecycle (docs/architecture.md): the escalation runner never reaches into the notifications service; it hears of chains from the journal and acknowledges through its DeliveryAcknowledgements port.",
      from: {path: "^src/services/escalation/"},
      to: {path: "^src/services/notifications/notifications\\.service\\.ts$"}
    },
    {
      // no-folder-circular does not see a circle between a folder and its own subfolder.
      name: "integrations-subfolders-point-down",
      severity: "error",
      comment:
        "Inside services/integrations/ imports point down: the service and email intake above the transports (mqtt/, snmp/), each transport above intake/ only, and intake/ (the device intake every transport hands to) at the bottom.",
      from: {path: "^src/services/integrations/(mqtt|snmp|intake)/"},
      to: {
        path: "^src/services/integrations/",
        pathNot: ["^src/services/integrations/$1/", "^src/services/integrations/intake/"]
      }
    },
    {
      name: "outbox-at-services-level",
      severity: "error",
      comment: "outbox/ is a background sender beside the services: it uses them, they never use it.",
      from: {path: "^src/outbox/"},
      to: {path: outside("outbox", "services", "store", "domain", "settings", "lib")}
    },
    {
      name: "ops-is-infrastructure",
      severity: "error",
      comment: "ops/ reads services and stores; nothing above services/ (no api/, dashboard/, outbox/).",
      from: {path: "^src/ops/"},
      to: {path: outside("ops", "services", "channels", "store", "domain", "settings", "lib")}
    },
    {
      name: "dashboard-at-the-edge",
      severity: "error",
      comment:
        "dashboard/ (sessions, live feed, static app) uses services; api/ serves it, so it never imports api/ or ops/.",
      from: {path: "^src/dashboard/"},
      to: {path: outside("dashboard", "services", "store", "domain", "settings", "lib")}
    },
    {
      name: "api-at-the-edge",
      severity: "error",
      comment:
        "api/ calls services, the dashboard's services and ops/ (metrics, backups); never a driver or the modem.",
      from: {path: "^src/api/"},
      to: {path: outside("api", "dashboard", "ops", "services", "store", "domain", "settings", "lib")}
    },
    {
      name: "edge-sees-store-types-only",
      severity: "error",
      comment:
        "The edge reaches data through services; from store/ it takes record types (and the journal's storage error, which the error catalogue maps).",
      from: {path: "^src/(api|dashboard)/"},
      to: {path: "^src/store/", pathNot: "^src/store/journal/journal\\.ts$", dependencyTypesNot: ["type-only"]}
    },
    {
      name: "cli-stays-small",
      severity: "error",
      comment: "The klaxon CLI is bundled into one executable: it talks HTTP, and runs restore offline.",
      from: {path: "^src/cli/"},
      to: {path: outside("cli", "ops", "domain", "settings", "lib")}
    },
    {
      name: "framework-at-the-edge",
      severity: "error",
      comment: "Ts.ED belongs to api/ and the composition root; services never speak HTTP.",
      from: {path: "^src/", pathNot: ["^src/api/", "^src/server\\.ts$", "^src/boot/gateway\\.ts$"]},
      to: {path: "(^|/)node_modules/@tsed/"}
    }
  ],
  options: {
    doNotFollow: {path: "node_modules"},
    tsConfig: {fileName: "tsconfig.json"},
    // Type-only imports count: a type from an upper layer ties the lower one to it just the same.
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default"]}
  }
};

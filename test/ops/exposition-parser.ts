/**
 * A strict reader of the Prometheus text format (0.0.4), written from the format's description,
 * not from our writer: every line must be a HELP, a TYPE or a sample of a declared family.
 */
export interface ParsedSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface ParsedExposition {
  types: Map<string, string>;
  samples: ParsedSample[];
  /** The value of the one sample with this name and these labels (exactly), or undefined. */
  value(name: string, labels?: Record<string, string>): number | undefined;
}

const NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
const LABEL = `[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*"`;
const SAMPLE = new RegExp(
  `^(${NAME})(?:\\{((?:${LABEL})(?:,${LABEL})*)?\\})? (NaN|[+-]Inf|[-+]?[0-9]*\\.?[0-9]+(?:[eE][-+]?[0-9]+)?)$`
);
const HELP = new RegExp(`^# HELP (${NAME}) .*$`);
const TYPE = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`);
const SUFFIXES: Record<string, string[]> = {histogram: ["_bucket", "_sum", "_count"], summary: ["_sum", "_count", ""]};

function parseLabels(text: string | undefined): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const match of (text ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
    labels[match[1]] = match[2].replace(/\\n/g, "\n").replace(/\\"/g, '"').replace(/\\\\/g, "\\");
  }
  return labels;
}

function familyOf(name: string, types: Map<string, string>): string | null {
  if (types.has(name)) return name;
  for (const [family, type] of types) {
    if ((SUFFIXES[type] ?? []).some((suffix) => suffix && name === family + suffix)) return family;
  }
  return null;
}

export function parseExposition(text: string): ParsedExposition {
  if (!text.endsWith("\n")) throw new Error("an exposition ends with a newline");
  const types = new Map<string, string>();
  const samples: ParsedSample[] = [];
  text
    .slice(0, -1)
    .split("\n")
    .forEach((line, index) => {
      const where = `line ${index + 1}: ${line}`;
      if (HELP.test(line)) return;
      const type = TYPE.exec(line);
      if (type) {
        if (types.has(type[1])) throw new Error(`${where}: TYPE given twice`);
        types.set(type[1], type[2]);
        return;
      }
      const sample = SAMPLE.exec(line);
      if (!sample) throw new Error(`${where}: not a valid line`);
      if (!familyOf(sample[1], types)) throw new Error(`${where}: sample of an undeclared family`);
      const raw = sample[3];
      samples.push({
        name: sample[1],
        labels: parseLabels(sample[2]),
        value: raw === "+Inf" ? Infinity : raw === "-Inf" ? -Infinity : Number(raw)
      });
    });
  const same = (a: Record<string, string>, b: Record<string, string>) =>
    Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([key, value]) => b[key] === value);
  return {
    types,
    samples,
    value(name, labels = {}) {
      const found = samples.filter((sample) => sample.name === name && same(sample.labels, labels));
      if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} appears ${found.length} times`);
      return found[0]?.value;
    }
  };
}

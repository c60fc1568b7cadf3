/** Prometheus text exposition format 0.0.4: https://prometheus.io/docs/instrumenting/exposition_formats/ */
export const EXPOSITION_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

export type Labels = Record<string, string>;

export interface Sample {
  labels?: Labels;
  value: number;
  /** `_bucket`, `_sum` or `_count` for histograms; nothing for plain samples. */
  suffix?: string;
}

/** One metric: its name, help text, type and samples. */
export interface MetricFamily {
  name: string;
  help: string;
  type: "gauge" | "counter" | "histogram";
  samples: Sample[];
}

function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return String(value);
}

function formatLabels(labels: Labels | undefined): string {
  const entries = Object.entries(labels ?? {});
  return entries.length ? `{${entries.map(([name, value]) => `${name}="${escapeLabelValue(value)}"`).join(",")}}` : "";
}

/** Renders families as one exposition document. */
export function renderExposition(families: MetricFamily[]): string {
  const lines: string[] = [];
  for (const family of families) {
    lines.push(`# HELP ${family.name} ${family.help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")}`);
    lines.push(`# TYPE ${family.name} ${family.type}`);
    for (const sample of family.samples)
      lines.push(`${family.name}${sample.suffix ?? ""}${formatLabels(sample.labels)} ${formatValue(sample.value)}`);
  }
  return lines.join("\n") + "\n";
}

/** Request durations in seconds, by label set; buckets suit an API answering in milliseconds. */
export class Histogram {
  private readonly series = new Map<string, {labels: Labels; counts: number[]; sum: number; count: number}>();

  constructor(readonly buckets: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]) {}

  observe(labels: Labels, value: number): void {
    const key = JSON.stringify(labels);
    let entry = this.series.get(key);
    if (!entry) this.series.set(key, (entry = {labels, counts: this.buckets.map(() => 0), sum: 0, count: 0}));
    this.buckets.forEach((bound, index) => {
      if (value <= bound) entry.counts[index]++;
    });
    entry.sum += value;
    entry.count++;
  }

  samples(): Sample[] {
    const samples: Sample[] = [];
    for (const {labels, counts, sum, count} of this.series.values()) {
      this.buckets.forEach((bound, index) =>
        samples.push({labels: {...labels, le: String(bound)}, value: counts[index], suffix: "_bucket"})
      );
      samples.push(
        {labels: {...labels, le: "+Inf"}, value: count, suffix: "_bucket"},
        {labels, value: sum, suffix: "_sum"},
        {labels, value: count, suffix: "_count"}
      );
    }
    return samples;
  }
}

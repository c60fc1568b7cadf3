import {execFile, spawn, type ChildProcess} from "node:child_process";

/** The speech tools cannot run here (not installed, or broken): voice notes are left out. */
export class SpeechUnavailableError extends Error {
  override name = "SpeechUnavailableError";
}

export interface SpeechOptions {
  /** espeak-ng voice, e.g. "en-us", "de". */
  voice: string;
  /** The whole synthesis (speech and encoding) is cut off after this long. */
  timeoutMs: number;
  /** The programs to run; other names only in tests (a missing binary). */
  espeakCommand?: string;
  opusencCommand?: string;
}

// 24 kbit/s mono Opus is what Telegram's own clients record voice notes at: clear speech, small files.
const OPUS_BITRATE_KBPS = "24";
const STDERR_TAIL_CHARS = 300;
/** A minute of espeak-ng's 22 kHz 16-bit mono is 2.6 MB; a preview script is far shorter. */
const WAV_MAX_BYTES = 16 * 1024 * 1024;

/**
 * Offline text to speech for voice notes: `espeak-ng --stdout TEXT | opusenc - -`, an OGG/Opus
 * file in memory. The programs are spawned without a shell and the text is one argument after
 * `--`, so no text can become a shell command or an option. Nothing leaves the box.
 */
export class SpeechSynthesizer {
  private readonly espeak: string;
  private readonly opusenc: string;
  private unavailableReason: string | null = null;

  constructor(private readonly options: SpeechOptions) {
    this.espeak = options.espeakCommand ?? "espeak-ng";
    this.opusenc = options.opusencCommand ?? "opusenc";
  }

  /** Why voice notes cannot be made here, as found by the last `check()`; null when they can. */
  get unavailable(): string | null {
    return this.unavailableReason;
  }

  /** Speaks one word end to end, so a missing program, voice or library shows at start, not during an alert. */
  async check(): Promise<string | null> {
    try {
      await this.synthesize("Klaxon");
      this.unavailableReason = null;
    } catch (error) {
      this.unavailableReason = (error as Error).message;
    }
    return this.unavailableReason;
  }

  /** The text as an OGG/Opus voice note. Throws SpeechUnavailableError when a program is missing. */
  synthesize(text: string, signal?: AbortSignal): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const speaker = spawn(this.espeak, ["-v", this.options.voice, "--stdout", "--", text], {
        stdio: ["ignore", "pipe", "pipe"]
      });
      const encoder = spawn(this.opusenc, ["--quiet", "--bitrate", OPUS_BITRATE_KBPS, "-", "-"], {
        stdio: ["pipe", "pipe", "pipe"]
      });
      const output: Buffer[] = [];
      const stderr = {[this.espeak]: "", [this.opusenc]: ""};
      let settled = false;
      let exited = 0;

      const finish = (error: Error | null) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        if (error) {
          // A program that vanished after the start check is remembered, not tried per alert.
          if (error instanceof SpeechUnavailableError) this.unavailableReason = error.message;
          speaker.kill("SIGKILL");
          encoder.kill("SIGKILL");
          reject(error);
        } else {
          resolve(Buffer.concat(output));
        }
      };
      const onAbort = () => finish(new Error("speech synthesis aborted"));
      const timer = setTimeout(
        () => finish(new Error(`speech synthesis took longer than ${this.options.timeoutMs} ms`)),
        this.options.timeoutMs
      );
      signal?.addEventListener("abort", onAbort);

      const watch = (child: ChildProcess, name: string) => {
        child.on("error", (error: NodeJS.ErrnoException) => {
          finish(
            error.code === "ENOENT"
              ? new SpeechUnavailableError(`${name} is not installed (Debian: apt install espeak-ng opus-tools)`)
              : new SpeechUnavailableError(`${name} cannot run: ${error.message}`)
          );
        });
        child.stderr?.on("data", (chunk: Buffer) => {
          stderr[name] = (stderr[name] + chunk.toString("utf8")).slice(-STDERR_TAIL_CHARS);
        });
        // A failing program ends the synthesis at once: the other one may be blocked on the pipe between them.
        child.on("close", (code) => {
          if (code !== 0)
            return finish(new Error(`${name} exited with ${code}: ${stderr[name].trim() || "no message"}`));
          if (++exited < 2) return;
          finish(output.length === 0 ? new Error(`${this.opusenc} produced no audio`) : null);
        });
      };
      watch(speaker, this.espeak);
      watch(encoder, this.opusenc);
      // The encoder dying early closes its input; that shows as its own exit, not as a crash here.
      encoder.stdin?.on("error", () => undefined);
      encoder.stdout?.on("data", (chunk: Buffer) => output.push(chunk));
      speaker.stdout?.pipe(encoder.stdin);
    });
  }

  /**
   * The text as a WAV file, espeak-ng's own output without the Opus step: what a browser plays in
   * a recipient's preview. Throws SpeechUnavailableError when espeak-ng is missing.
   */
  wav(text: string): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      execFile(
        this.espeak,
        ["-v", this.options.voice, "--stdout", "--", text],
        {encoding: "buffer", timeout: this.options.timeoutMs, maxBuffer: WAV_MAX_BYTES},
        (error, stdout) => {
          if (!error) return resolve(stdout);
          const missing = (error as NodeJS.ErrnoException).code === "ENOENT";
          reject(
            new SpeechUnavailableError(
              missing ? `${this.espeak} is not installed (Debian: apt install espeak-ng)` : error.message
            )
          );
        }
      );
    });
  }
}

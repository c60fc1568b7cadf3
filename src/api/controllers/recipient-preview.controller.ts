import {Controller, inject} from "@tsed/di";
import {Context, PathParams} from "@tsed/platform-params";
import type {PlatformContext} from "@tsed/platform-http";
import {Description, Get, Post, Returns, Summary, Tags} from "@tsed/schema";
import {MessagePreviewService} from "../../services/recipients/message-preview.service.js";
import {AppError} from "../../services/shared/errors.js";
import {Authorize} from "../auth/authorize.js";
import {API_TAGS} from "../http/openapi-tags.js";
import {ProblemModel} from "../models/problem.model.js";
import {RecipientPreviewModel} from "../models/preview.model.js";
import {expressResponse} from "../typed-tsed.js";

const WAV_SUFFIX = ".wav";

/** A recipient's messages before the hardware: what each channel would send, nothing sent. */
@Controller("/api/v1/recipients")
@Tags(API_TAGS.recipients)
export class RecipientPreviewController {
  private readonly previews = inject(MessagePreviewService);

  @Post("/:uuid/preview")
  @Authorize("recipients:read")
  @Summary("What each of the recipient's channels would send for a sample alert; nothing is sent")
  @Description(
    "For every channel the recipient has a contact for: the email's subject, text and HTML, the SMS text with its encoding and part count, the Telegram message and voice-note script, the call's script. Spoken channels carry an audio_url for the speech as WAV."
  )
  @Returns(200, RecipientPreviewModel)
  @Returns(404, ProblemModel)
  preview(@PathParams("uuid") uuid: string) {
    return this.previews.preview(uuid);
  }

  @Get("/:uuid/preview/:file")
  @Authorize("recipients:read")
  @Summary("The speech of a spoken channel's preview as WAV: voice_call.wav or telegram_voice.wav")
  @(Returns(200, String).ContentType("audio/wav"))
  @(Returns(404, ProblemModel).Description("No such recipient, or no contact for that spoken channel"))
  @(Returns(409, ProblemModel).Description("Speech cannot be made on this box (espeak-ng missing)"))
  async speech(@PathParams("uuid") uuid: string, @PathParams("file") file: string, @Context() ctx: PlatformContext) {
    if (!file.endsWith(WAV_SUFFIX)) throw new AppError("not_found", `no preview file ${file}`);
    const audio = await this.previews.speech(uuid, file.slice(0, -WAV_SUFFIX.length));
    const response = expressResponse(ctx);
    response.status(200).type("audio/wav").setHeader("Cache-Control", "no-store");
    response.send(audio);
  }
}

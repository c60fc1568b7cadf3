import {CollectionOf, Description, Enum, Integer, Nullable, Property, Required} from "@tsed/schema";
import {CHANNELS} from "../../domain/vocabulary.js";

/** The sample alert every preview shows. */
export class PreviewSampleModel {
  @Required() notification_id: string;
  @Required() priority: string;
  @Required() message: string;
  @Required() @Nullable(String) source: string | null;
  @Required() @Nullable(String) link: string | null;
}

/** What one channel would send; which fields come depends on the channel. */
export class ChannelPreviewModel {
  @Required() @Enum(...CHANNELS) channel: string;
  @Required()
  @Description("The contact it would go to, in full (the preview is for whoever may read recipients)")
  contact: string;
  @Property() @Description("email: the subject") subject?: string;
  @Property() @Description("email, sms, telegram_voice: the text as sent") text?: string;
  @Property() @Nullable(String) @Description("email: the HTML part") html?: string | null;
  @Property() @Enum("gsm7", "ucs2") @Description("sms: the encoding the text needs") encoding?: string;
  @Property() @Integer() @Description("sms: how many SMS the text takes") parts?: number;
  @Property() @Description("voice_call, telegram_voice: what is spoken") script?: string;
  @Property() @Description("voice_call, telegram_voice: the speech as audio/wav (GET, same key)") audio_url?: string;
}

export class RecipientPreviewModel {
  @Required() recipient_uuid: string;
  @Required() sample: PreviewSampleModel;
  @Required() @CollectionOf(ChannelPreviewModel) channels: ChannelPreviewModel[];
}

import {CollectionOf, Description, Required} from "@tsed/schema";

export class BackupFileModel {
  @Required() @Description("journal.sqlite or config.json") name: string;
  @Required() bytes: number;
}

export class BackupModel {
  @Required() @Description("The backup's folder name: its creation time, e.g. 2026-11-22T02-30-00Z") name: string;
  @Required() created_at: string;
  @Required() @Description("Absolute path of the folder on the gateway's disk") path: string;
  @Required() @CollectionOf(BackupFileModel) files: BackupFileModel[];
}

export class BackupListModel {
  @Required() @CollectionOf(BackupModel) @Description("Newest first") items: BackupModel[];
}

import {Controller, inject} from "@tsed/di";
import {Context, PathParams} from "@tsed/platform-params";
import type {PlatformContext} from "@tsed/platform-http";
import {Description, Get, Post, Returns, Summary, Tags} from "@tsed/schema";
import {BackupService} from "../../ops/backups.js";
import {notFound} from "../../services/shared/errors.js";
import {actorOf, Authorize} from "../auth/authorize.js";
import {BackupListModel, BackupModel} from "../models/backup.model.js";
import {ProblemModel} from "../models/problem.model.js";
import {IdempotencyService} from "../../services/notifications/idempotency.service.js";
import {answerCreation, IdempotentCreate} from "../http/idempotent-create.js";
import {API_TAGS} from "../http/openapi-tags.js";

@Controller("/api/v1/backups")
@Tags(API_TAGS.backups)
export class BackupsController {
  private readonly backups = inject(BackupService);
  private readonly idempotency = inject(IdempotencyService);

  @Post("/")
  @Authorize("admin")
  @Summary("Back up the journal and the config store now")
  @Description(
    "An online backup into <data_dir>/backups/<time>/; the oldest beyond backup.keep are deleted; audited as backup.created. Restore with the gateway stopped: `klaxon restore <name>`."
  )
  @Returns(201, BackupModel)
  @(Returns(400, ProblemModel).Description("A malformed Idempotency-Key"))
  @(Returns(503, ProblemModel).Description("No room on the disk for the backup; nothing was kept"))
  @IdempotentCreate()
  create(@Context() ctx: PlatformContext) {
    return answerCreation(ctx, this.idempotency, async () => {
      const backup = await this.backups.create(actorOf(ctx));
      return {location: `/api/v1/backups/${backup.name}`, resource: backup};
    });
  }

  @Get("/")
  @Authorize("admin")
  @Summary("List the backups kept on the gateway, newest first")
  @Returns(200, BackupListModel)
  async list() {
    return {items: await this.backups.list()};
  }

  @Get("/:name")
  @Authorize("admin")
  @Summary("One backup")
  @Returns(200, BackupModel)
  @Returns(404, ProblemModel)
  async get(@PathParams("name") name: string) {
    const backup = (await this.backups.list()).find((item) => item.name === name);
    if (!backup) throw notFound("backup", name);
    return backup;
  }
}

import type {ConfigStore, DashboardCredential} from "../store/config/config-store.js";

/** The dashboard's admin password hash, in the config store beside the API key hashes. */
export class AdminCredentialRepository {
  constructor(private readonly store: ConfigStore) {}

  get(): DashboardCredential {
    return this.store.data.dashboard;
  }

  save(credential: DashboardCredential): Promise<void> {
    return this.store.update((draft) => {
      draft.dashboard = credential;
    });
  }
}

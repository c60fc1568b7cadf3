/**
 * Where backups live and what they hold, apart from the code that writes them: the CLI bundles
 * this for `klaxon restore` without pulling in the journal and its native driver.
 */
/** The files a backup holds, named as in the data dir, so restoring is copying them back. */
export const BACKUP_FILES = {journal: "journal.sqlite", config: "config.json"} as const;
/** Kept too when present, restored when the backup has them: the key that signs emailed acknowledge links. */
export const OPTIONAL_BACKUP_FILES = {ackLinkKey: "ack-link.key"} as const;
export const BACKUPS_DIR = "backups";

/**
 * The environment of every child process (SPEC 1): the daemon's own, minus what would point a child at another
 * repository than the root's, plus settings that keep anything from prompting, paging or opening an editor.
 */

/**
 * git's variables that choose a repository, an index, an object store or configuration for one invocation. Inherited
 * from a daemon started inside a hook or by a git alias, they would make the VFS and the git tools act on another
 * repository than the root's (seen: GIT_DIR made find_file list another repository's files).
 */
export const REPOSITORY_VARS = [
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_INDEX_FILE",
  "GIT_INDEX_VERSION",
  "GIT_OBJECT_DIRECTORY",
  "GIT_ALTERNATE_OBJECT_DIRECTORIES",
  "GIT_COMMON_DIR",
  "GIT_NAMESPACE",
  "GIT_PREFIX",
  "GIT_CEILING_DIRECTORIES",
  "GIT_DISCOVERY_ACROSS_FILESYSTEM",
  "GIT_CONFIG",
  "GIT_CONFIG_PARAMETERS",
  "GIT_CONFIG_COUNT",
  "GIT_QUARANTINE_PATH",
  "GIT_REFLOG_ACTION",
  "GIT_ASKPASS",
  "SSH_ASKPASS",
  // ripgrep's own configuration file would change what search matches, from outside the call.
  "RIPGREP_CONFIG_PATH",
];

/** Set for every child: nothing may wait for a person. */
const NO_PROMPT: Record<string, string> = {
  GIT_TERMINAL_PROMPT: "0",
  GIT_EDITOR: ":",
  GIT_SEQUENCE_EDITOR: ":",
  GIT_MERGE_AUTOEDIT: "no",
  GIT_PAGER: "cat",
  PAGER: "cat",
  EDITOR: ":",
  VISUAL: ":",
  GCM_INTERACTIVE: "never",
};

export type Env = Record<string, string | undefined>;

/** `base` (the daemon's environment) made safe for a child, then `extra` on top (an undefined value removes a name). */
export function childEnv(extra: Env = {}, base: Env = process.env): Record<string, string> {
  const env: Env = { ...base };
  for (const name of REPOSITORY_VARS) delete env[name];
  // GIT_CONFIG_KEY_n / GIT_CONFIG_VALUE_n go with GIT_CONFIG_COUNT.
  for (const name of Object.keys(env)) if (/^GIT_CONFIG_(KEY|VALUE)_\d+$/.test(name)) delete env[name];
  Object.assign(env, NO_PROMPT);
  if (env.GIT_SSH_COMMAND === undefined && env.GIT_SSH === undefined) env.GIT_SSH_COMMAND = "ssh -o BatchMode=yes";
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return out;
}

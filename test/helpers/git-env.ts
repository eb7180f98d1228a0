/**
 * The environment every git the tests run gets (vitest.config.ts puts it in process.env): git's advice and warnings
 * off, so a run's stderr shows only what fails. The daemon drops GIT_CONFIG_COUNT and its keys from what its own git
 * sees (platform/child-env.ts), so what it runs is not changed by this.
 */
const CONFIG: Record<string, string> = {
  "init.defaultBranch": "main",
  // "LF will be replaced by CRLF": the line tests make such files on purpose
  "core.safecrlf": "false",
  "pull.rebase": "false",
  ...Object.fromEntries(
    [
      "addEmbeddedRepo",
      "addIgnoredFile",
      "addEmptyPathspec",
      "amWorkDir",
      "checkoutAmbiguousRemoteBranchName",
      "commitBeforeMerge",
      "detachedHead",
      "diverging",
      "fetchShowForcedUpdates",
      "forceDeleteBranch",
      "ignoredHook",
      "implicitIdentity",
      "mergeConflict",
      "nestedTag",
      "pushAlreadyExists",
      "pushFetchFirst",
      "pushNeedsForce",
      "pushNonFFCurrent",
      "pushNonFFMatching",
      "pushUnqualifiedRefName",
      "pushUpdateRejected",
      "resolveConflict",
      "rmHints",
      "sequencerInUse",
      "setUpstreamFailure",
      "skippedCherryPicks",
      "statusAheadBehind",
      "statusHints",
      "statusUoption",
      "submoduleAlternateErrorStrategyDie",
      "suggestDetachingHead",
      "updateSparsePath",
      "waitingForEditor",
    ].map((name) => [`advice.${name}`, "false"]),
  ),
};

export const GIT_TEST_ENV: Record<string, string> = Object.fromEntries([
  ["GIT_CONFIG_COUNT", String(Object.keys(CONFIG).length)],
  ...Object.entries(CONFIG).flatMap(([key, value], i) => [
    [`GIT_CONFIG_KEY_${i}`, key],
    [`GIT_CONFIG_VALUE_${i}`, value],
  ]),
]);

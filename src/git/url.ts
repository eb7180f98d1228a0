/** Pure: what kind of repository address git would take a clone URL for (git's transport.c and connect.c rules). */

/** Network transports a clone may use; everything else (ext::, fd::, http without TLS, other helpers) is refused. */
export const ALLOWED_SCHEMES = new Set(["https", "ssh", "git+ssh", "ssh+git", "git"]);

/**
 * git's protocol policy for a clone and its preview, on top of the checks here: only these transports, whatever a
 * configuration says (`protocol.allow` has the last word inside git, so a helper this code missed still cannot run).
 */
export const CLONE_PROTOCOLS = [
  "-c",
  "protocol.allow=never",
  "-c",
  "protocol.https.allow=always",
  "-c",
  "protocol.ssh.allow=always",
  "-c",
  "protocol.git.allow=always",
  "-c",
  "protocol.file.allow=always",
];

export type RepoAddress =
  | { kind: "helper"; helper: string }
  | { kind: "network"; scheme: string }
  | { kind: "unsupported"; scheme: string }
  | { kind: "local"; path: string };

/**
 * `<transport>::<address>` runs `git remote-<transport>` (fd:: reads a descriptor, ext:: runs a command);
 * `scheme://…` is a URL; `host:path` with the colon before any slash is ssh (scp syntax); anything else is a local path,
 * as is `file://PATH`.
 */
export function classifyUrl(url: string): RepoAddress {
  const helper = /^([A-Za-z0-9][A-Za-z0-9+.-]*)::/.exec(url);
  if (helper) return { kind: "helper", helper: helper[1] };
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url);
  if (scheme) {
    const name = scheme[1].toLowerCase();
    if (name === "file") {
      const rest = url.slice(scheme[0].length);
      // file:///abs or file://localhost/abs; a percent sign could spell a path git reads differently than we would.
      const m = /^(?:localhost)?(\/[^%]*)$/.exec(rest);
      return m ? { kind: "local", path: m[1] } : { kind: "unsupported", scheme: "file" };
    }
    return ALLOWED_SCHEMES.has(name) ? { kind: "network", scheme: name } : { kind: "unsupported", scheme: name };
  }
  const colon = url.indexOf(":");
  const slash = url.indexOf("/");
  if (colon >= 0 && (slash < 0 || colon < slash)) return { kind: "network", scheme: "ssh" };
  return { kind: "local", path: url };
}

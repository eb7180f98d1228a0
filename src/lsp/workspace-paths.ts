/** Between the tools' paths (root-relative inside the root, absolute outside) and the servers' file URIs. */
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export class WorkspacePaths {
  constructor(readonly root: string) {}

  absOf(file: string): string {
    return path.isAbsolute(file) ? file : path.join(this.root, file);
  }

  uriOf(file: string): string {
    return pathToFileURL(this.absOf(file)).href;
  }

  /** A URI as the tools name it; a URI that is not a file's (`untitled:`, a zip) stays as it is. */
  readonly pathOf = (uri: string): string => {
    if (!uri.startsWith("file:")) return uri;
    const abs = fileURLToPath(uri);
    const rel = path.relative(this.root, abs);
    return rel.startsWith("..") || path.isAbsolute(rel) ? abs : rel.split(path.sep).join("/");
  };
}

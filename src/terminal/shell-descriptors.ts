/**
 * Descriptors a line opens on files. Opening /dev/fd/N, /dev/stdout or /proc/self/fd/N for writing reopens what
 * descriptor N points to: after `3<f` (or `exec 3<f`, or `1<f` for /dev/stdout), `> /dev/fd/3` writes the file f.
 * Redirections are recorded over the whole line, nested scripts included, without following their order or scope
 * (a group's, a function's, a child shell's descriptors): any write through a descriptor number some redirection opened
 * on a file is refused. Fail closed, and a line that reads a file on one descriptor and writes another is untouched.
 */
export class Descriptors {
  /** `{name}<f`: bash picks the number, 10 or more. */
  static readonly NAMED = -1;
  /** Which redirection opened a descriptor on a file, for the message. */
  private readonly onFile = new Map<number, string>();
  private readonly copies: [to: number, from: number][] = [];
  private readonly writes: { fd: number; form: string }[] = [];

  opened(fd: number, redirection: string): void {
    if (!this.onFile.has(fd)) this.onFile.set(fd, redirection);
  }

  /** `to>&from`, `to<&from`, `to< /dev/fd/from`: `to` points where `from` does. */
  copied(to: number, from: number): void {
    this.copies.push([to, from]);
  }

  /** A write through the path of descriptor `fd`. */
  wrote(fd: number, form: string): void {
    this.writes.push({ fd, form });
  }

  private fileOf(fd: number): string | undefined {
    return this.onFile.get(fd) ?? (fd >= 10 ? this.onFile.get(Descriptors.NAMED) : undefined);
  }

  /** Why the first write through a descriptor reaches a file, or null when none does. */
  writeToFile(): string | null {
    for (let changed = true; changed; ) {
      changed = false;
      for (const [to, from] of this.copies) {
        const how = this.fileOf(from);
        if (how !== undefined && !this.onFile.has(to)) {
          this.onFile.set(to, how);
          changed = true;
        }
      }
    }
    for (const w of this.writes) {
      const how = this.fileOf(w.fd);
      if (how !== undefined) return `${w.form} writes to descriptor ${w.fd}, which ${how} opened on a file: it writes that file`;
    }
    return null;
  }
}

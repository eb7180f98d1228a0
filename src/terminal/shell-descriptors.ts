/** Where a descriptor a redirection opened points: a file (of the workspace or elsewhere), or the private /tmp. */
export type Opened = "file" | "tmp";

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
  /** Which redirection opened a descriptor, by where it points, for the message. */
  private readonly opens: Record<Opened, Map<number, string>> = { file: new Map(), tmp: new Map() };
  private readonly copies: [to: number, from: number][] = [];
  private readonly writes: { fd: number; form: string }[] = [];

  opened(fd: number, redirection: string, where: Opened): void {
    if (!this.opens[where].has(fd)) this.opens[where].set(fd, redirection);
  }

  /** `to>&from`, `to<&from`, `to< /dev/fd/from`: `to` points where `from` does. */
  copied(to: number, from: number): void {
    this.copies.push([to, from]);
  }

  /** A write through the path of descriptor `fd`. */
  wrote(fd: number, form: string): void {
    this.writes.push({ fd, form });
  }

  /** Why the first write through a descriptor reaches a file, or null when none does. */
  writeToFile(): string | null {
    const w = this.firstWrite("file");
    return w && `${w.form} writes to descriptor ${w.fd}, which ${w.how} opened on a file: it writes that file`;
  }

  /** The first write through a descriptor that points into the private /tmp (it is a write there from the shell). */
  writeToTmp(): string | null {
    return this.firstWrite("tmp")?.form ?? null;
  }

  private firstWrite(where: Opened): { fd: number; form: string; how: string } | null {
    const opens = this.opens[where];
    const of = (fd: number): string | undefined => opens.get(fd) ?? (fd >= 10 ? opens.get(Descriptors.NAMED) : undefined);
    for (let changed = true; changed; ) {
      changed = false;
      for (const [to, from] of this.copies) {
        const how = of(from);
        if (how !== undefined && !opens.has(to)) {
          opens.set(to, how);
          changed = true;
        }
      }
    }
    for (const w of this.writes) {
      const how = of(w.fd);
      if (how !== undefined) return { ...w, how };
    }
    return null;
  }
}

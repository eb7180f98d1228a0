import { describe, expect, test } from "vitest";
import { checkCommand, checkCommandSync, initShellParser, shellParserReady, shellWriteRefused } from "../../src/terminal/shell-parse.js";

/** Lines that must run, by rule. */
const ALLOWED: Record<string, string[]> = {
  "redirections to devices, descriptors and the private /tmp": [
    "ls > /dev/null",
    "ls 2>/dev/null",
    "ls &>/dev/null",
    "npm test 2>&1 | tail -20",
    "echo oops >&2",
    "exec 3>&1 4>&- 1>&2-",
    "echo x > /dev/stderr",
    "echo x > /dev/fd/3",
    "echo x > /tmp/scratch.txt",
    "echo x >> /tmp/a/../b.log",
    'echo x > "/dev/null"',
    "exec > >(tee /dev/null) 2>&1",
  ],
  "input redirections": ["wc -l < input.txt", 'cat <<< "$x"', "exec 0< in.txt", "cat 0<&3", "exec 3<<EOF\nx\nEOF"],
  "comparisons that look like redirections": ["[[ a > b ]]", "(( a > b ))", "echo $(( 1 > 2 ))"],
  "quoted, escaped and commented": ["echo 'a > b' \"c > d\" a\\>b # > f", "git commit -m 'tee x > y'"],
  "here-documents are data": [
    "cat <<EOF\necho x > f\nEOF",
    "cat <<'EOF'\n$(echo x > f)\nEOF",
    "cat <<EOF > /dev/null\nx\nEOF",
    "cat <<EOF >> /tmp/notes\nx\nEOF",
    "python3 <<EOF\nopen('x', 'w')\nEOF",
  ],
  "a here-document a shell runs is checked, and may pass": ["bash <<'EOF'\necho ok\nEOF", "sh <<EOF\nls -l\nEOF", "bash <<< 'echo hi'"],
  "nested scripts that write nothing": ["bash -c 'echo hi'", "sh -c 'ls 2>/dev/null'", "bash -c 'echo $1' _ x", "eval 'echo hi'", "eval echo hi", "trap 'rm -f /tmp/x' EXIT", "alias ll='ls -l'"],
  "scripts and other languages run like any program": [
    "bash script.sh",
    "bash -x ./run.sh arg",
    "source ./env.sh",
    ". ./env.sh",
    "python -c 'open(\"x\",\"w\").write(\"y\")'",
    "node -e 'require(\"fs\").writeFileSync(\"x\",\"y\")'",
    "bash",
  ],
  "programs that copy, move or generate files": ["cp a b && mv b c", "install -m 644 a b", "gcc -o app main.c", "npm test", "npx tsc -p .", "git status"],
  tee: ["ls | tee", "ls | tee /dev/null", "ls | tee -a /dev/stderr", "ls | tee /tmp/log", "ls | tee >(gzip > /dev/null)"],
  "script and su": ["script -qc 'make test' /dev/null", "su -c 'make' nobody"],
  "backticks the parser leaves to the rules": ['echo "${a:-`ls`}"', "cat <<EOF\nuse `ls` and \\`tee x\\` here\nEOF", "cat <<'EOF'\na `tee f` b\nEOF", "coproc cat", "{ echo hi; }"],
  sed: ["sed s/a/b/ f", "sed -n -e 's/i/x/p' f", "sed -es/i/x/ f", "sed -f script.sed f", "sed -- -i f", "sed -E 's/(a)/\\1/' f"],
  perl: ["perl -pe s/a/b/ f", "perl -ne 'print if /i/' f", "perl script.pl -i", "perl -Ilib -e 1"],
  dd: ["dd if=f of=/dev/null", "dd if=/dev/urandom bs=16 count=1"],
  truncate: ["truncate -s 0 /tmp/x"],
  "sort -o": ["sort -o /dev/stdout in", "sort -k2 -t, in", "sort -ro/tmp/x in"],
  find: ["find . -name x -exec grep -l foo {} +", "find . -name '*.o' -delete", "find . -fprint /dev/stdout"],
  wrappers: [
    "env FOO=1 npm test",
    "env -i PATH=/usr/bin make",
    "timeout 60 npm test",
    "timeout -k 5 60 make",
    "nice make -j4",
    "xargs -0 grep -l foo",
    "command -v tee",
    "ionice -c 3 -p 1",
    "flock /tmp/l make",
    "stdbuf -oL make",
    "time make",
    "sudo make install",
  ],
};

/** Lines that must be refused, by rule, with a piece of the reason that says what was found. */
const REFUSED: Record<string, [string, string][]> = {
  "output redirection to a file": [
    ["echo hi > out.txt", "`> out.txt` writes the file out.txt"],
    ["echo hi >> log", "`>> log`"],
    ["echo hi >| f", "`>| f`"],
    ["ls &> all.log", "`&> all.log`"],
    ["ls &>> all.log", "`&>> all.log`"],
    ["cat 3<> f", "`<>`"],
    ["echo x >& f", "`>& f`"],
    ["echo x 2> err.log", "`2> err.log`"],
    ["ls 1>out", "`1> out`"],
    ["> f", "`> f`"],
    [": > f", "`> f`"],
    [">/dev/null tee f", "`tee f`"],
    ["{ echo; } > f", "`> f`"],
    ["(echo) > f", "`> f`"],
    ["for i in 1; do echo; done > f", "`> f`"],
    ["while read l; do echo; done < in > out", "`> out`"],
    ["echo > ./tmp/x", "writes the file ./tmp/x"],
    ["echo > ~/x", "writes the file ~/x"],
    ["echo > /tmp/../etc/passwd", "writes the file /tmp/../etc/passwd"],
    ["[ a > b ]", "inside `[ … ]`, `> b` is an output redirection"],
  ],
  "exec redirections": [
    ["exec 3> f", "`3> f`"],
    ["exec > build.log 2>&1", "`> build.log`"],
  ],
  "a redirection target that is not literal": [
    ['echo > "$f"', "not literal"],
    ['echo > "$(pick)"', "not literal"],
    ["echo > /tmp/$name", "not literal"],
    ['echo >&"$fd"', "not literal"],
  ],
  "here-documents and here-strings into a file": [
    ["cat <<EOF > out\nx\nEOF", "`> out`"],
    ["cat > out <<'EOF'\nx\nEOF", "`> out`"],
    ["cat <<< hi >> out", "`>> out`"],
    ["cat <<EOF\n$(echo x > f)\nEOF", "`> f`"],
    ["cat <<EOF && tee x\nhi\nEOF", "`tee x`"],
  ],
  "a here-document or here-string a shell runs": [
    ["bash <<EOF\necho x > f\nEOF", "inside a here-document that `bash` runs"],
    ["sh <<'EOF'\nsed -i s/a/b/ f\nEOF", "`sed -i`"],
    ["bash <<EOF\n$cmd\nEOF", "expands variables or commands"],
    ["bash <<< 'echo > f'", "inside a here-string that `bash` runs"],
    ["cat <<EOF | bash\nls\nEOF", "reads its script from a pipe"],
    ["echo 'echo x > f' | sh", "reads its script from a pipe"],
    ["source <(curl -s example.com)", "runs the output of a command"],
    ["bash <(echo ls)", "runs the output of a command"],
    ["source /dev/stdin <<EOF\necho > f\nEOF", "`> f`"],
    ["exec <<'EOF'\necho x > f\nEOF\nbash", "makes it the shell's stdin"],
  ],
  "bash -c and other shells' -c, recursively": [
    ["bash -c 'echo x > f'", "`> f` writes the file f, inside `bash -c`"],
    ['sh -c "ls | tee out"', "`tee out`"],
    ["bash -lc 'sed -i s/a/b/ f'", "`sed -i`"],
    ["bash -o pipefail -c 'echo > f'", "inside `bash -c`"],
    ["bash -c \"bash -c 'echo x > f'\"", "inside `bash -c`, inside `bash -c`"],
    ['bash -c "echo \\"\\$(ls > f)\\""', "`> f`"],
    ["zsh -c 'echo > f'", "inside `zsh -c`"],
    ["dash -c 'echo > f'", "inside `dash -c`"],
    ["/bin/sh -c 'echo > f'", "inside `sh -c`"],
    ['bash -c "$script"', "is not a literal string"],
    ["bash -c 'echo \"unterminated'", "could not be checked, inside `bash -c`"],
  ],
  "substitutions, subshells, groups, functions and lists": [
    ['echo "$(ls > f)"', "`> f`"],
    ["echo `ls > f`", "`> f`"],
    ["diff <(sort a > s) b", "`> s`"],
    ["diff <(ls) >(tee x)", "`tee x`"],
    ["f() { echo x > y; }", "`> y`"],
    ["a=$(date > f)", "`> f`"],
    ["declare -x a=$(date > f)", "`> f`"],
    ["echo ${x:-$(rm f > g)}", "`> g`"],
    ["if true; then echo > f; fi", "`> f`"],
    ["case x in a) echo > f;; esac", "`> f`"],
    ["true && echo > f || false", "`> f`"],
    ["(cd sub && echo > f)", "`> f`"],
    ["! ls > f", "`> f`"],
    ["ls & echo > f", "`> f`"],
  ],
  eval: [
    ["eval 'echo x > f'", "inside `eval`"],
    ["eval echo x '>' f", "inside `eval`"],
    ['eval "$x"', "not literal"],
    ["eval $(ssh-agent)", "not literal"],
    ["builtin eval 'echo > f'", "inside `eval`"],
  ],
  "scripts the shell keeps for later": [
    ["trap 'echo x > f' EXIT", "inside `trap`"],
    ["alias w='tee f'", "inside `alias`"],
  ],
  tee: [
    ["ls | tee out.txt", "`tee out.txt` writes the file out.txt"],
    ["tee -a log < in", "`tee log`"],
    ["ls | tee /dev/null out", "`tee out`"],
    ['ls | tee "$f"', "not a literal word"],
    ["cat file | sudo tee /etc/hosts", "`tee /etc/hosts`"],
  ],
  "sed -i": [
    ["sed -i s/a/b/ f", "`sed -i`"],
    ["sed -i.bak s/a/b/ f", "`sed -i`"],
    ["sed -ni p f", "`sed -i`"],
    ["sed -Ei s/a/b/ f", "`sed -i`"],
    ["sed --in-place=.bak s/a/b/ f", "`sed -i`"],
    ["sed --in s/a/b/ f", "`sed -i`"],
    ["sed -e s/a/b/ f -i", "`sed -i`"],
    ["/usr/bin/sed -i s/a/b/ f", "`sed -i`"],
    ['"sed" -i s/a/b/ f', "`sed -i`"],
    ["\\sed -i s/a/b/ f", "`sed -i`"],
    ["sed >/dev/null -i s/a/b/ f", "`sed -i`"],
  ],
  "perl -i": [
    ["perl -i -pe s/a/b/ f", "`perl -i`"],
    ["perl -pi -e s/a/b/ f", "`perl -i`"],
    ["perl -pie s/a/b/ f", "`perl -i`"],
    ["perl -i.bak -pe s/a/b/ f", "`perl -i`"],
    ["perl -0777 -pi -e s/a/b/ f", "`perl -i`"],
    ["perl -e 1 -i f", "`perl -i`"],
  ],
  "dd of=": [
    ["dd if=/dev/zero of=disk.img bs=1M count=1", "`dd of=disk.img`"],
    ['dd if=/dev/zero of="$f"', "not a literal word"],
    ['dd "$op"', "could be of=FILE"],
  ],
  truncate: [
    ["truncate -s 0 log", "`truncate log`"],
    ["truncate --size=0 log", "`truncate log`"],
  ],
  "sort -o, find -fprint, time -o": [
    ["sort -o out in", "`sort -o out`"],
    ["sort -uo out in", "`sort -o out`"],
    ["sort --output=out in", "`sort -o out`"],
    ["find . -fprint list.txt", "`find -fprint list.txt`"],
    ["time -o t.txt make", "`time -o t.txt`"],
  ],
  "script and su": [
    ["script -q -c make", "`script typescript`"],
    ["script -qc make log.txt", "`script log.txt`"],
    ["script -c make -O out.log /dev/null", "`script -O out.log`"],
    ["script -qc 'echo > f' /dev/null", "inside `script -c`"],
    ["su -c 'tee f' nobody", "inside `su -c`"],
  ],
  "find -exec": [
    ["find . -name '*.js' -exec sed -i s/a/b/ {} \\;", "`sed -i`"],
    ["find . -execdir tee {} +", "`tee {}`"],
    ["find . -ok sed -i s/a/b/ {} ';'", "`sed -i`"],
  ],
  wrappers: [
    ["env -i A=1 sed -i s/a/b/ f", "`sed -i`"],
    ["env -u HOME tee f", "`tee f`"],
    ["env -S 'sed -i s/a/b/ f'", "`sed -i`"],
    ["nice -n 10 tee f", "`tee f`"],
    ["nice -10 tee f", "`tee f`"],
    ["timeout 10 tee f", "`tee f`"],
    ["timeout -s KILL -k 5 10 tee f", "`tee f`"],
    ["timeout --signal=TERM 10 sed -i x f", "`sed -i`"],
    ["xargs -0 -n 1 sed -i s/a/b/", "`sed -i`"],
    ["xargs -I{} tee {}", "`tee {}`"],
    ["ls | xargs tee", "xargs reads from stdin"],
    ["command tee f", "`tee f`"],
    ["command -p sed -i x f", "`sed -i`"],
    ["exec tee f", "`tee f`"],
    ["nohup tee f", "`tee f`"],
    ["stdbuf -oL tee f", "`tee f`"],
    ["time tee f", "`tee f`"],
    ["sudo -u root tee /etc/x", "`tee /etc/x`"],
    ["ionice -c 3 tee f", "`tee f`"],
    ["chrt -f 10 tee f", "`tee f`"],
    ["setsid -w tee f", "`tee f`"],
    ["flock /tmp/l tee f", "`tee f`"],
    ["flock /tmp/l -c 'echo > f'", "inside `flock -c`"],
    ["busybox sed -i x f", "`sed -i`"],
    ["watch -n 1 'echo > f'", "inside `watch`"],
    ["coproc tee f", "`tee f`"],
    ["timeout 5 env FOO=1 nice xargs sed -i s/a/b/", "`sed -i`"],
  ],
  "where tree-sitter-bash misreads the line": [
    ["time { tee f; }", "the parser read `{` as a command"],
    ["! { tee f; }", "the parser read `{` as a command"],
    ["coproc NAME { tee f; }", "the parser read `{` as a command"],
    ['echo "${a:-`tee f`}"', "`tee f` writes the file f (in `tee f`), inside a backtick substitution"],
    ["cat <<EOF\na `tee f` b\nEOF", "inside a backtick substitution"],
    ["cat <<EOF\nunclosed ` here\nEOF", "an unclosed backtick"],
    ["bash <<EOF\nls `pwd`\nEOF", "expands variables or commands"],
  ],
  "a shell started without a script reads stdin": [
    ["echo 'tee f' | sudo -s", "`sudo -s` reads its script from a pipe"],
    ["su <<EOF\ntee f\nEOF", "inside a here-document that `su` runs"],
  ],
  "a command name that is not literal": [
    ["$CC -o app main.c", "the command name `$CC` is not a literal word"],
    ['"$(which sed)" -i x f', "is not a literal word"],
  ],
  "a line that does not parse": [
    ['echo "unterminated', "an unterminated quote"],
    ["echo 'unterminated", "an unterminated quote"],
    ["echo $(ls", "incomplete"],
    ["ls &&", "incomplete"],
    ["if true; then echo", "could not be checked"],
    ["cat <<EOF\nno end", "could not be checked"],
    ["echo a 2>/dev/null b <<<x c", "could not be checked"],
    ["{ echo; } > /dev/null x", "could not be checked"],
  ],
};

describe("shell check", () => {
  test("checkCommandSync needs the grammar loaded; checkCommand loads it", async () => {
    expect(shellParserReady()).toBe(false);
    expect(() => checkCommandSync("ls")).toThrow(/initShellParser/);
    expect(await checkCommand("ls")).toEqual({ ok: true, commands: ["ls"] });
    expect(shellParserReady()).toBe(true);
    await initShellParser(); // memoized: a second call is free and keeps the same parser
    expect(checkCommandSync("ls -l")).toEqual({ ok: true, commands: ["ls -l"] });
  });

  for (const [rule, lines] of Object.entries(ALLOWED)) {
    test(`allowed: ${rule}`, async () => {
      await initShellParser();
      for (const line of lines) expect(checkCommandSync(line), line).toMatchObject({ ok: true });
    });
  }

  for (const [rule, cases] of Object.entries(REFUSED)) {
    test(`refused: ${rule}`, async () => {
      await initShellParser();
      for (const [line, reason] of cases) {
        const v = checkCommandSync(line);
        expect(v.ok, line).toBe(false);
        if (!v.ok) expect(v.reason, line).toContain(reason);
      }
    });
  }

  test("the sandbox's private /tmp is not the workspace when the workspace lives under /tmp", async () => {
    await initShellParser();
    expect(checkCommandSync("echo x > /tmp/ws/a", { root: "/tmp/ws" }).ok).toBe(false);
    expect(checkCommandSync("echo x > /tmp/ws", { root: "/tmp/ws" }).ok).toBe(false);
    expect(checkCommandSync("ls | tee /tmp/ws/log", { root: "/tmp/ws" }).ok).toBe(false);
    expect(checkCommandSync("echo x > /tmp/ws-other/a", { root: "/tmp/ws" }).ok).toBe(true);
    expect(checkCommandSync("echo x > /tmp/ws/a").ok).toBe(true);
  });

  test("a shell reading the call's stdin runs it as a script, so the stdin is checked", async () => {
    await initShellParser();
    const v = checkCommandSync("bash", { stdin: "echo x > f" });
    expect(v.ok).toBe(false);
    if (!v.ok) expect(v.reason).toContain("inside the call's stdin, which `bash` runs");
    expect(checkCommandSync("bash -s", { stdin: "echo ok" })).toEqual({ ok: true, commands: ["bash -s", "echo ok"] });
    expect(checkCommandSync("cat", { stdin: "echo x > f" }).ok).toBe(true); // data, not a script
    expect(checkCommandSync("bash < run.sh", { stdin: "echo x > f" }).ok).toBe(true); // stdin is the file
  });

  test("scripts nested deeper than the bound are refused, not walked forever", async () => {
    await initShellParser();
    let line = "echo hi";
    for (let i = 0; i < 12; i++) line = `eval ${JSON.stringify(line).replaceAll("$", "\\$")}`;
    const v = checkCommandSync(line);
    expect(v.ok).toBe(false);
    if (!v.ok) expect(v.reason).toContain("nested more than 8 deep");
    expect(checkCommandSync("eval \"eval 'echo hi'\"").ok).toBe(true);
  });

  test("the commands for the preview: every simple command, nested ones included, in order", async () => {
    await initShellParser();
    expect(checkCommandSync("cd src; npm test 2>&1 | tail -5")).toEqual({ ok: true, commands: ["cd src", "npm test 2>&1", "tail -5"] });
    // tree-sitter-bash binds `&&` tighter than `|` and hangs the redirection on the list: the command stays, its text
    // loses the redirection (the rules check every redirection wherever the grammar puts it).
    expect(checkCommandSync("cd src && npm test 2>&1 | tail -5")).toEqual({ ok: true, commands: ["cd src", "npm test", "tail -5"] });
    expect(checkCommandSync("bash -c 'make && make test'")).toEqual({ ok: true, commands: ["bash -c 'make && make test'", "make", "make test"] });
    expect(checkCommandSync("source ./env.sh; echo \"$(date)\"")).toEqual({ ok: true, commands: ["source ./env.sh", 'echo "$(date)"', "date"] });
    expect(checkCommandSync("")).toEqual({ ok: true, commands: [] });
  });

  test("the reason names the command it was found in", async () => {
    await initShellParser();
    const v = checkCommandSync("make && env FOO=1 sed -i s/a/b/ f");
    expect(v).toEqual({ ok: false, reason: "`sed -i` edits files in place (in `env FOO=1 sed -i s/a/b/ f`)" });
  });

  test("a refusal becomes SHELL_WRITE_REFUSED, whose message points to file_write", () => {
    const e = shellWriteRefused("the output redirection `> f` writes the file f");
    expect(e.code).toBe("SHELL_WRITE_REFUSED");
    expect(e.message).toContain("`> f`");
    expect(e.message).toContain("file_write");
    expect(e.details).toEqual({ reason: "the output redirection `> f` writes the file f" });
  });
});

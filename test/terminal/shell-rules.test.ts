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
  "nested scripts that write nothing": [
    "bash -c 'echo hi'",
    "sh -c 'ls 2>/dev/null'",
    "bash -c 'echo $1' _ x",
    "eval 'echo hi'",
    "eval echo hi",
    "trap 'rm -f /tmp/x' EXIT",
    "alias ll='ls -l'",
  ],
  "scripts and other languages run like any program": [
    "bash script.sh",
    "bash -x ./run.sh arg",
    "source ./env.sh",
    ". ./env.sh",
    'python -c \'open("x","w").write("y")\'',
    'node -e \'require("fs").writeFileSync("x","y")\'',
    "bash",
  ],
  "programs that copy, move or generate files": ["cp a b && mv b c", "install -m 644 a b", "gcc -o app main.c", "npm test", "npx tsc -p .", "git status"],
  tee: ["ls | tee", "ls | tee /dev/null", "ls | tee -a /dev/stderr", "ls | tee /tmp/log", "ls | tee >(gzip > /dev/null)"],
  "script and su": ["script -qc 'make test' /dev/null", "su -c 'make' nobody"],
  "backticks the parser leaves to the rules": [
    'echo "${a:-`ls`}"',
    "cat <<EOF\nuse `ls` and \\`tee x\\` here\nEOF",
    "cat <<'EOF'\na `tee f` b\nEOF",
    "coproc cat",
    "{ echo hi; }",
  ],
  sed: ["sed s/a/b/ f", "sed -n -e 's/i/x/p' f", "sed -es/i/x/ f", "sed -n -- p -i", "sed -E 's/(a)/\\1/' f"],
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
  "descriptors: /dev/stdout and /dev/fd/N where nothing opened them on a file": [
    "echo hi > /dev/null",
    "make 2>&1",
    "ls > /dev/stdout",
    "cat < in.txt > /dev/stdout",
    "wc -l < f 2>/dev/stderr",
    'while read -r l; do echo "$l" > /dev/stderr; done < in',
    "exec 3</dev/null; echo x > /dev/fd/3",
    "exec 3<<EOF\ny\nEOF\necho x > /dev/fd/3",
    "exec 3< <(ls); cat /dev/fd/3 > /dev/stdout",
    "sed 's/x/y/w /dev/stdout' f",
  ],
  "aliases defined and not used, code-carrying variables with checkable values": [
    "alias",
    "alias ll",
    "PS4='+ ' bash -xc ls",
    "PS4='+ $LINENO: '; set -x; ls",
    "GIT_PAGER=cat git log",
    "EDITOR=vim git commit",
    "PAGER='less -R' man ls",
    "x=hello; echo ${x@Q}",
    "BASH_ENV=./env.sh bash -c make",
    "export GIT_SSH_COMMAND='ssh -o BatchMode=yes'",
    "x='$(date)'; echo \"$x\"",
  ],
  "arithmetic, subscripts and names without hidden commands": [
    "(( i++ ))",
    "echo $(( 1 + 2 ))",
    "[[ -v HOME ]]",
    "[[ -v a[0] ]]",
    "test -v HOME",
    "[ -v HOME ]",
    "[[ $x -eq 1 ]]",
    "let i+=1",
    "printf '%s\\n' x",
    "printf -v out '%s' x",
    "read -r line < f",
    "mapfile -t lines < f",
    "readarray -t a < f",
    "mapfile -C echo -c 1 a < f",
    "declare -a arr=(1 2)",
    "declare -A m=([k]=v)",
    "local x=1",
    'export PATH="$PATH:/x"',
    "readonly N=3",
    "typeset -n ref=arr",
    "declare -p PATH",
    "unset x arr",
    "unset 'arr[0]'",
    "a[i+1]=2",
  ],
  "sed scripts that write nothing": [
    "sed -n p f",
    "sed 's/a/b/' f",
    "sed -n '10,20p' f",
    'sed -n "${a},${b}p" f',
    'sed "s/$old/$new/g" f',
    "sed '/start/,/end/d' f",
    "sed -e 's/a/b/;s/c/d/g' f",
    "sed 'a text; w f' in",
    "sed 'r other' f",
    "sed -E 's/(a|b)+/x/2g' f",
    "sed '1d;$d' f",
    "sed -n '/re/I p' f",
    "sed 'y/abc/xyz/' f",
    "sed ':a;N;$!ba;s/\\n/ /g' f",
    "sed -n 'l 5' f",
    "sed 2q f",
    "sed = f",
    "sed '/x/{s/a/b/;p}' f",
    "sed --sandbox 'w f' in",
    "sed 's/#/x/ # a comment' f",
    "sed '$!N' f",
  ],
  "awk programs that write nothing": [
    "awk '{print $1}' f",
    "awk -F: '$3 > 100 { print $1 }' /etc/passwd",
    "awk '{ if ($1 > 2) print ($1 > 3) }' f",
    "awk '{print > \"/dev/stderr\"}' f",
    "awk 'BEGIN { system(\"date\") }'",
    "awk '{print | \"sort -u\"}' f",
    "awk -v n=3 'NR > n' f",
    "awk '/a\\/b/ { print }' f",
    "awk '{ x = a / b; print x }' f",
    "awk 'length($0) > 80' f",
    "awk '{ print \"a > b\" }' f",
    "awk 'BEGIN { \"date\" | getline d; print d }'",
    "awk '$2 ~ /x|y/' f",
    "awk '{ print $1 || $2 }' f",
    "awk '{s+=$1} END {print s}' f",
    "awk '/[/]/ { n++ } END { print n }' f",
    "awk '{ getline line < \"other\"; print line }' f",
    "gawk '{print}' f",
    "gawk -S 'BEGIN { system(\"tee f\") }'",
    'awk "NR==$n" f',
    'awk "{ print \\$$col }" f',
  ],
  "copies from files": ["cp a b", "cp -r src dst", "cp a /dev/stdout", "install -m 644 a b", "mv a b", "cp -t dir a b"],
  "git -c with keys that run nothing, and git config reads": [
    "git -c color.ui=always log",
    "git -c core.pager=cat log",
    "git -c user.name=x -c user.email=y commit -m m",
    "git -C sub status",
    "git -c core.quotepath=off status",
    "git -c alias.st=status st",
    "git --no-pager log",
    "git config --get user.name",
    "git config user.name x",
  ],
  "the private /tmp: a program's own output there, or shell writes there nothing reads back": [
    "gcc -o /tmp/app main.c && /tmp/app",
    "make > /tmp/build.log 2>&1; tail -5 /tmp/build.log",
    "echo x > /tmp/x; bash script.sh",
    "cp /tmp/out.txt result.txt",
    "ln -s ../lib/x.so build/x.so",
    "ln -s /tmp/cache .cache && make",
    "tar -xzf a.tgz",
    "tar xf a.tar -C out",
    "tar -czf out.tgz src",
    "unzip a.zip -d out",
    "cd src && bash run.sh",
    'PATH="$HOME/bin:$PATH" make',
    "export PATH=/usr/local/bin:$PATH",
    "history",
    "fc -l",
    "rsync -a src/ dst/",
    "git -c init.defaultBranch=main init x",
    "echo x > /tmp/log; cd src; bash run.sh",
  ],
  "patches from files": ["patch -p1 < fix.diff", "patch -p1 -i fix.diff", "git apply fix.diff", "git am 0001.patch", "patch a.c fix.diff"],
  "names that are no rule: a path is a program, not a builtin; no object key is a rule": ["__proto__ x", "constructor", "/opt/bin/declare 'a[$(tee f)]'"],
  "make with a makefile and plain variables": [
    "make -f Makefile",
    "make -C sub test",
    "make -j4",
    "make CC=clang CFLAGS='-O2 -g'",
    "make install PREFIX=/usr/local",
    "make V=1",
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
  "a descriptor opened on a file, then written through /dev/stdout or /dev/fd/N": [
    ["echo x 1<f >/dev/stdout", "descriptor 1, which `1< f` opened on a file"],
    ["echo x 3<f >/dev/fd/3", "descriptor 3, which `3< f`"],
    ["echo x 0<f >/dev/fd/0", "descriptor 0"],
    ["echo x 0<f >/dev/stdin", "descriptor 0"],
    ["echo x 2<f >/dev/stderr", "descriptor 2"],
    ["echo x 3<f >/proc/self/fd/3", "descriptor 3"],
    ["exec 3<f; echo x > /dev/fd/3", "descriptor 3"],
    ["echo x 3<f 1>&3 >/dev/stdout", "descriptor 1"],
    ["echo x 1<f 2>&1 >/dev/stderr", "descriptor 2"],
    ["exec 3<f; bash -c 'echo x > /dev/fd/3'", "descriptor 3"],
    ["{ echo x > /dev/fd/3; } 3<f", "descriptor 3"],
    ["exec {fd}<f; echo x > /dev/fd/10", "descriptor 10"],
    ['echo x 3<"$f" >/dev/fd/3', "descriptor 3"],
    ["tee /dev/fd/3 3<f < in", "descriptor 3"],
    ["sed 'w /dev/stdout' 1<f", "descriptor 1"],
    ["awk '{ print > \"/dev/fd/3\" }' 3<f", "descriptor 3"],
  ],
  "aliases the line defines and uses": [
    ["alias x=tee\nx f", "`x` is an alias the line defines"],
    ["shopt -s expand_aliases; alias x=sed\nx -i s/a/b/ f", "is an alias the line defines"],
    ["bash -c $'shopt -s expand_aliases\\nalias x=tee\\nx f'", "is an alias the line defines"],
    ["BASH_ALIASES[x]=tee", "`BASH_ALIASES`"],
    ["BASH_ALIASES=([x]=tee)", "`BASH_ALIASES`"],
    ["BASH_CMDS[x]=/usr/bin/tee; x f", "`BASH_CMDS`"],
    ["hash -p /usr/bin/tee x; x f", "`hash -p`"],
  ],
  "variables whose value bash or a program runs as code": [
    ["PS4='$(echo x > f)'; set -x; ls", "`> f` writes the file f"],
    ["PS4='\\044(tee f) '; set -x; :", "prompt"],
    ["export PS4='`tee f`'", "`PS4`"],
    ["PS4='$(tee f)' bash -xc ls", "`PS4`"],
    ["env PS4='$(tee f)' bash -xc ls", "`PS4`"],
    ["sudo GIT_EDITOR='tee f' git commit", "inside the value of `GIT_EDITOR`"],
    ["sudo A=1 sed -i s/a/b/ f", "`sed -i`"],
    ['PS4="$x"; set -x; ls', "`PS4`"],
    ["printf -v PS4 '%s' x", "`PS4`"],
    ["read PS4 <<< x", "`PS4`"],
    ["for PS4 in x; do set -x; done", "`PS4`"],
    [": ${PS4:='$(tee f)'}", "`PS4`"],
    ["PROMPT_COMMAND='tee f' bash -ic :", "inside the value of `PROMPT_COMMAND`"],
    ["x='\\044(tee f)'; echo ${x@P}", "`@P`"],
    ["echo ${HOME@P}", "`@P`"],
    ["PAGER='tee f' git -p log", "inside the value of `PAGER`"],
    ["GIT_PAGER='sed -i s/a/b/ f' git -p log", "`sed -i`"],
    ["EDITOR=tee git commit", "inside the value of `EDITOR`"],
    ["declare -x GIT_EDITOR='tee f'", "inside the value of `GIT_EDITOR`"],
    ["GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0='tee f' git -p log", "`GIT_CONFIG_COUNT`"],
    ["BASH_ENV=<(echo 'tee f') bash -c :", "`BASH_ENV`"],
    ['GIT_SSH_COMMAND="$cmd" git fetch', "not literal"],
    ["x='a[$(tee f)]'; (( x ))", "which bash evaluates"],
  ],
  "arithmetic and names whose subscripts run commands": [
    ["(( 'a[$(echo > f)]' ))", "which bash evaluates"],
    ["echo $(( 'a[$(tee f)]' ))", "which bash evaluates"],
    ["a['$(tee f)']=1", "which bash evaluates"],
    ["echo ${a['$(tee f)']}", "which bash evaluates"],
    ["test -v 'a[$(echo>f)]'", "which bash evaluates"],
    ["[ -v 'a[$(tee f)]' ]", "which bash evaluates"],
    ["[[ -v 'a[$(tee f)]' ]]", "which bash evaluates"],
    ["[[ 'a[$(tee f)]' -eq 1 ]]", "which bash evaluates"],
    ["printf -v 'a[$(echo > f)]' x", "which bash evaluates"],
    ["read 'a[$(tee f)]' <<< x", "which bash evaluates"],
    ["mapfile 'a[$(tee f)]' < in", "which bash evaluates"],
    ["declare 'a[$(echo>f)]=1'", "which bash evaluates"],
    ["declare -a 'arr=([$(tee f)]=1)'", "which bash evaluates"],
    ["local 'a[$(tee f)]=1'", "which bash evaluates"],
    ["typeset -n r='a[$(tee f)]'", "which bash evaluates"],
    ["unset 'a[$(tee f)]'", "which bash evaluates"],
    ["let 'a[$(tee f)]=1'", "which bash evaluates"],
    ['i="a[\\$(tee f)]"; (( i++ ))', "which bash evaluates"],
    ["declare -i n; n='a[$(tee f)]'", "which bash evaluates"],
    ["builtin declare 'a[$(tee f)]=1'", "which bash evaluates"],
    ['printf -v "$name" x', "not literal"],
    ['declare "$x"', "not literal"],
    ['unset "$x"', "not literal"],
    ["[[ -v $x ]]", "not literal"],
  ],
  "mapfile and readarray callbacks": [
    ["mapfile -C 'tee f' -c 1 < in", "inside `mapfile -C`"],
    ["readarray -C tee -c 1 a < in", "inside `readarray -C`"],
    ['mapfile -C "$cb" < in', "not literal"],
  ],
  "sed scripts that write files or run commands": [
    ["sed 'w f' in", "`sed w f` writes the file f"],
    ["sed -n 's/x/y/w f' in", "`sed w f`"],
    ["sed 'W f' in", "`sed W f`"],
    ["sed -e p -e 'w out' in", "`sed w out`"],
    ["sed --expression='1w out' in", "`sed w out`"],
    ["sed '/x/{w out\n}' in", "`sed w out`"],
    ["sed '1!G;h;$!d;w out' in", "`sed w out`"],
    ["sed 's|a|b|gw out' in", "`sed w out`"],
    ["sed 'y/abc/xyz/;w o' in", "`sed w o`"],
    ["sed --posix -n '$w out' in", "`sed w out`"],
    ["sed '0~3w f' in", "`sed w f`"],
    ["sed 'b end; w f; :end' in", "`sed w f; :end`"],
    ["sed 's/a/b/e' in", "`sed s///e`"],
    ["sed e in", "`sed e`"],
    ["sed 'e tee f' in", "inside `sed e`"],
    ["sed -f script.sed in", "`sed -f`"],
    ["sed -f - in", "`sed -f`"],
    ['sed "s/a/b/$flags" in', "could not be checked"],
    ['sed "$script" in', "could not be checked"],
    ["sed 'k' in", "could not be checked"],
  ],
  "awk programs that write files or run commands": [
    ["awk '{print > \"f\"}' in", "`awk > f` writes the file f"],
    ['awk \'{printf "%s", $0 >> "log"}\' in', "`awk >> log`"],
    ["awk '$1 > 5 { print $1 > \"out\" }' in", "`awk > out`"],
    ["awk '{ print $1, $2 > $3 }' in", "not a literal string"],
    ["awk '{print | \"tee f\"}' in", "inside `awk |`"],
    ["awk '{print | cmd}' in", "not a literal string"],
    ["awk 'BEGIN{system(\"tee f\")}'", "inside `awk system()`"],
    ["awk 'BEGIN{system(cmd)}'", "not a literal string"],
    ["awk 'BEGIN{\"tee f\" | getline}'", "inside `awk |`"],
    ["awk -f prog.awk in", "`awk -f`"],
    ["awk --file=prog.awk in", "`awk -f`"],
    ["gawk -i inplace '{print}' f", "`gawk -i`"],
    ["awk '@include \"x\"'", "`@include`"],
    ['awk "{print > \\"$f\\"}"', "not a literal string"],
    ['awk "$prog" f', "a shell variable where a statement starts"],
    ['awk "NR==1 { $cmd }" f', "a shell variable where a statement starts"],
    ["awk -S 'BEGIN{system(\"tee f\")}'", "inside `awk system()`"],
    ["gawk -d '{print}' f", "`gawk -d awkvars.out` writes the file awkvars.out"],
    ["mawk 'BEGIN { print |& \"tee f\" }'", "inside `awk |`"],
  ],
  "copies from stdin, descriptors and devices": [
    ["cp /dev/stdin f <<< x", "`cp /dev/stdin` copies"],
    ["ls | cp /dev/stdin f", "copies"],
    ["cp /dev/fd/0 f", "copies"],
    ["cp /proc/self/fd/0 f", "copies"],
    ["install /dev/stdin f <<< x", "`install /dev/stdin` copies"],
    ["mv /dev/stdin f", "copies"],
    ["cp - f", "copies"],
    ["cp <(echo x) f", "copies"],
    ["cp -t dir /dev/stdin", "copies"],
    ["cp /dev/null f", "copies"],
  ],
  "git -c with keys that run commands": [
    ["git -c alias.x='!tee f' x", "inside the value of `git -c alias.x`"],
    ["git -c core.pager='tee f' -p log", "inside the value of `git -c core.pager`"],
    ["git -c core.editor='sed -i s/a/b/ f' commit", "`sed -i`"],
    ["git -c core.sshCommand='tee f' fetch", "inside the value of `git -c core.sshCommand`"],
    ["git -c core.hooksPath=hooks commit", "`git -c core.hooksPath`"],
    ["git -c include.path=x.cfg log", "`git -c include.path`"],
    ["git -c diff.x.textconv='tee f' diff", "inside the value of `git -c diff.x.textconv`"],
    ["git -c filter.x.clean='tee f' add .", "inside the value of `git -c filter.x.clean`"],
    ["git -c core.fsmonitor='tee f' status", "inside the value of `git -c core.fsmonitor`"],
    ['git -c "$kv" log', "not literal"],
    ["git -c protocol.ext.allow=always ls-remote ext::sh", "`git -c protocol.ext.allow`"],
    ["git --config-env=core.pager=P -p log", "`git --config-env core.pager`"],
    ["git config core.pager 'tee f'", "inside the value of `git config core.pager`"],
    ["git config --file f.cfg a.b c", "`git config --file f.cfg` writes the file f.cfg"],
    ["git -c init.templateDir=/tmp/t clone x y", "`git -c init.templateDir`"],
    ["git -c sendemail.smtpServer=/tmp/s send-email x", "`git -c sendemail.smtpServer`"],
    ["git -c gpg.ssh.defaultKeyCommand='tee f' commit", "inside the value of `git -c gpg.ssh.defaultKeyCommand`"],
    ["rsync -e 'tee f' a host:b", "inside the value of `rsync -e`"],
  ],
  "a file the line writes into the private /tmp from the shell, then runs or copies": [
    [
      "echo 'echo x > f' > /tmp/s.sh; bash /tmp/s.sh",
      "`bash /tmp/s.sh` runs or copies a file from the private /tmp, and the line writes files there from the shell (`> /tmp/s.sh`)",
    ],
    ["echo x > /tmp/x && cp /tmp/x f", "`cp /tmp/x`"],
    ["printf 'tee f' | tee /tmp/s >/dev/null; source /tmp/s", "`source /tmp/s`"],
    ["echo 'tee f' > /tmp/s; chmod +x /tmp/s; /tmp/s", "`/tmp/s`"],
    ["echo 'all:;tee f' > /tmp/mk; make -f /tmp/mk", "`make -f /tmp/mk`"],
    ["echo '[core]pager=tee f' > /tmp/c; GIT_CONFIG_GLOBAL=/tmp/c git -p log", "`GIT_CONFIG_GLOBAL=/tmp/c`"],
    ["echo diff > /tmp/p; patch -i /tmp/p", "`patch /tmp/p`"],
    ['ln -s "$PWD/f" /tmp/l; echo x > /tmp/l', "`ln … /tmp/l` runs or copies a file from the private /tmp"],
    ["ln f /tmp/; echo x >> /tmp/f", "`ln … /tmp/`"],
    ['cp -s "$PWD/f" /tmp/l && tee /tmp/l < x', "`cp … /tmp/l`"],
    ['ln -s "$PWD/f" "$t"; echo x > /tmp/l', '`ln … "$t"`'],
    ["echo 'tee f' > /tmp/s; bash < /tmp/s", "`bash < /tmp/s`"],
    ["echo 'tee f' > /tmp/ls; chmod +x /tmp/ls; PATH=/tmp:$PATH ls", "`PATH=/tmp`"],
    ["cd /tmp && echo 'tee f' > /tmp/s && bash s", "`bash s`"],
    ["echo x > /tmp/x; rsync /tmp/x f", "`rsync /tmp/x`"],
    ["echo 'tee f' > /tmp/git-x; git --exec-path=/tmp x", "`--exec-path=/tmp`"],
    ["echo x > /tmp/p; patch -p1 < /tmp/p", "`patch < /tmp/p`"],
    ["echo x > /tmp/a.tar; tar -xf /tmp/a.tar", "`tar -x /tmp/a.tar`"],
    [
      "touch /tmp/x; exec 3</tmp/x; echo x > /dev/fd/3; cp /tmp/x f",
      "`cp /tmp/x` runs or copies a file from the private /tmp, and the line writes files there from the shell (`> /dev/fd/3`)",
    ],
  ],
  "patches the line or the call feeds on stdin": [
    ["patch -p1 <<'EOF'\n--- a/f\n+++ b/f\nEOF", "`patch` applies a patch from stdin"],
    ["printf 'x' | git apply", "`git apply` applies a patch from stdin"],
    ["git am /dev/stdin <<< x", "`git am` applies a patch from stdin"],
    ["patch -i <(echo x)", "applies a patch the shell feeds it"],
    ["echo x | sponge f", "`tee f`"],
    ["base64 -d <<< eA== | tar x", "`tar -x` extracts an archive from stdin"],
    ["printf x | cpio -i", "`cpio -i` extracts an archive from stdin"],
    ["tar -xf - <<< x", "`tar -x` extracts an archive from stdin"],
    ["unzip <(echo x)", "extracts an archive the shell feeds it"],
  ],
  "builtins that write a file or run a string": [
    ["history -w f", "`history -w f` writes the file f"],
    ["HISTFILE=f", "`HISTFILE=f` writes the file f"],
    ["compgen -C 'tee f' x", "inside `compgen -C`"],
    ["fc -s", "`fc` runs commands from the history"],
    ["getopts ab PS4", "`PS4`"],
    ["wait -p 'a[$(tee f)]'", "which bash evaluates"],
  ],
  "make reading a makefile the check cannot see": [
    ["make -f - <<< 'all:;tee f'", "`make -f -`"],
    ["make -f /dev/stdin < x", "`make -f /dev/stdin`"],
    ["make -f <(echo x)", "`make -f"],
    ["make --file=- < mk", "`make -f -`"],
    ["make --eval='all:;@tee f'", "`make --eval`"],
    ["make -E x", "`make --eval`"],
    ["make CC='tee f #' all", "inside the value of `make CC=`"],
    ["make 'X!=tee f'", "inside the value of `make X!=`"],
    ["make X='$(shell tee f)'", "`make X=`"],
    ['make -f "$mk"', "not a literal word"],
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
      for (const line of lines) expect.soft(checkCommandSync(line), line).toMatchObject({ ok: true });
    });
  }

  for (const [rule, cases] of Object.entries(REFUSED)) {
    test(`refused: ${rule}`, async () => {
      await initShellParser();
      for (const [line, reason] of cases) {
        const v = checkCommandSync(line);
        expect.soft(v.ok, line).toBe(false);
        if (!v.ok) expect.soft(v.reason, line).toContain(reason);
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
    expect(checkCommandSync("patch -p1", { stdin: "--- a/f\n+++ b/f\n" }).ok).toBe(false); // a patch from the call
    expect(checkCommandSync("patch -p1").ok).toBe(true); // no stdin: patch reads its end at once
  });

  test("the call's env is checked like assignments on the line: a pager or editor it sets runs as a command", async () => {
    await initShellParser();
    const v = checkCommandSync("git -p log", { env: { PAGER: "tee f" } });
    expect(v.ok).toBe(false);
    if (!v.ok) expect(v.reason).toContain("inside the value of `PAGER` (the call's env)");
    expect(checkCommandSync("git -p log", { env: { GIT_CONFIG_COUNT: "1" } }).ok).toBe(false);
    expect(checkCommandSync("(( N ))", { env: { N: "a[$(tee f)]" } }).ok).toBe(false);
    expect(checkCommandSync("git -p log", { env: { PAGER: "less -R", N: "a[$(date)]" } }).ok).toBe(true);
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
    expect(checkCommandSync('source ./env.sh; echo "$(date)"')).toEqual({ ok: true, commands: ["source ./env.sh", 'echo "$(date)"', "date"] });
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

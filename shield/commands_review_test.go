package shield

import (
	"strings"
	"testing"
	"time"
)

// reviewCases are the review's findings B4, B5, B7 and B8 (CDPATH) for the
// file, flow and tool models: each line and the facts it must (and, with
// "!", must not) give (see commandCases for the notation).
var reviewCases = []struct {
	line string
	want []string
}{
	// B4: printf's format is output; an empty or unsure list is unknown.
	{"cat $(printf /etc/shadow)", []string{"R /etc/shadow"}},
	{"cat `printf /etc/shadow`", []string{"R /etc/shadow"}},
	{"rm -rf $(printf /home)", []string{"D /home"}},
	{"printf x > $(printf ~/.bashrc)", []string{"W /home/u/.bashrc"}},
	{"cat $(printf %s%s /etc/sh adow)", []string{"R /etc/shadow"}},
	{"cat $(printf '%d' 1)", []string{"U"}},
	{"cat $(printf)", []string{"U"}},
	{"cat $(echo)", []string{"U"}},
	{"cat $(echo /etc/shadowXYZ | head -c 11)", []string{"U"}},
	{"cat $(echo /etc/shadow.x | grep -o /etc/shadow)", []string{"U"}},
	{"cat $(echo /etc/shadow.x | cut -c1-11)", []string{"U"}},
	{"cat $(echo /etc/x | tr x y)", []string{"U"}},
	{"cat $(echo /etc/x | sed s/x/y/)", []string{"U"}},
	{"cat $(ls | uniq -c)", []string{"U"}},
	{"cat $(echo /etc/passwd | grep -n pass)", []string{"U"}},
	{"cat $(echo src/a.go src/b.go | head -n 1)", []string{"R /ws/src/a.go", "R /ws/src/b.go", "!U"}},
	{"cat $(git ls-files '*.go') | wc -l", []string{"R /ws T", "!U"}},
	{"cat $(find . -name '*.go' | sort | uniq)", []string{"R /ws/**/*.go G", "!U"}},
	{"cat $(grep -l TODO -r src | grep -v vendor | head -5)", []string{"R /ws/src T", "!U"}},

	{"cat $(git show HEAD:notes.txt)", []string{"U"}},
	{"cat $(git log -1 --format=%s)", []string{"U"}},
	{"cat $(git grep -h shadow)", []string{"U"}},
	{"gofmt -l $(git diff --name-only HEAD)", []string{"R /ws T", "!U"}},
	{"cat $(git grep -l TODO)", []string{"R /ws T", "!U"}},

	{"cat $(find . -printf '/etc/shadow')", []string{"U"}},
	{"cat $(find . -name x -exec echo /etc/shadow \\;)", []string{"U"}},
	{"cat $(ls -l --time-style=+/etc/shadow)", []string{"U"}},
	{"cat $(fd -x echo /etc/shadow)", []string{"U"}},
	{"wc -l $(find src -name '*.go' -type f)", []string{"R /ws/src/**/*.go G", "!U"}},

	// B5: links made earlier in the line are followed.
	{"ln -s / r; cat r/etc/shadow", []string{"R /etc/shadow"}},
	{"ln -sT /root h && cat h/.aws/credentials", []string{"R /root/.aws/credentials"}},
	{"ln -sf / x && rm -rf x/*", []string{"D /* T G"}},
	{"ln -s /home d; rm -rf d/", []string{"D /home T"}},
	{"ln -s ~/.bashrc b; echo x >> b", []string{"W /home/u/.bashrc"}},
	{"ln -s .git/hooks h; echo x > h/pre-commit", []string{"W /ws/.git/hooks/pre-commit"}},
	{"ln -s ../.git/hooks src/h; echo x > src/h/pre-commit", []string{"W /ws/.git/hooks/pre-commit"}},
	{"ln /etc/shadow s; cat s", []string{"R /etc/shadow"}},
	{"cp -s /etc/shadow s; cat s", []string{"R /etc/shadow"}},
	{"ln -s $T r; cat r/x", []string{"U"}},
	{"cd src && ln -s /etc e && cd e && cat shadow", []string{"R /etc/shadow"}},
	{"ln -s /etc/shadow docs/; cat docs/shadow", []string{"R /etc/shadow"}},
	{"ln -s / r; cat r*/etc/shadow", []string{"R /etc/shadow"}},
	{"ln -s / r; cat ?/etc/shadow", []string{"R /etc/shadow"}},
	{"ln -s /etc/ssh s; cat s/../shadow", []string{"R /etc/shadow"}},
	{"ln -s / r; cd r; cat etc/shadow", []string{"R /etc/shadow"}},
	{"ln -s / r; cd r/tmp; cat ../etc/shadow", []string{"R /etc/shadow"}},
	{"ln -s / r; mv r q; cat q/etc/shadow", []string{"R /etc/shadow"}},
	{"ln -s / r; cp -a r q; cat q/etc/shadow", []string{"R /etc/shadow"}},
	{"ln -s / r; mkdir d; mv r d/; cat d/r/etc/shadow", []string{"R /etc/shadow"}},
	{"ln -s / r; sh -c 'cat r/etc/shadow'", []string{"R /etc/shadow"}},
	{"ln -s /etc lnk", []string{"R /etc T", "U"}},
	{"ln -s ../shared/config.yaml config.yaml", []string{"R /shared/config.yaml T", "U"}},
	{"ln -s shared/config.yaml config.yaml && cat config.yaml", []string{"R /ws/shared/config.yaml", "!U"}},

	// B7: programs with their own command language.
	{"sqlite3 app.db 'select count(*) from users'", []string{"R /ws/app.db", "!U", "!W /ws/app.db"}},
	{"sqlite3 app.db .schema", []string{"R /ws/app.db", "!U"}},
	{"sqlite3 app.db '.shell cat /etc/shadow'", []string{"R /etc/shadow", "X cat @sqlite3 .shell"}},
	{"sqlite3 app.db '.system id'", []string{"X id @sqlite3 .system"}},
	{"sqlite3 app.db '.output /root/.bashrc'", []string{"W /root/.bashrc"}},
	{"sqlite3 app.db '.once ~/.bashrc'", []string{"W /home/u/.bashrc"}},
	{"sqlite3 app.db \"select readfile('/etc/shadow')\"", []string{"R /etc/shadow"}},
	{"sqlite3 app.db \"select writefile('/root/.bashrc', 'x')\"", []string{"W /root/.bashrc"}},
	{"sqlite3 app.db \"select load_extension('/tmp/x.so')\"", []string{"U"}},
	{"sqlite3 app.db '.import /etc/shadow t'", []string{"R /etc/shadow"}},
	{"sqlite3 app.db '.read /tmp/x.sql'", []string{"R /tmp/x.sql", "U"}},
	{"sqlite3 -cmd '.shell id' app.db", []string{"X id @sqlite3 .shell"}},
	{"sqlite3 app.db < x.sql", []string{"U"}},
	{"echo .dump | sqlite3 app.db", []string{"R /ws/app.db", "!U"}},
	{"cat x.sql | sqlite3 app.db", []string{"U"}},
	{"sqlite3 app.db <<'EOF'\n.shell id\nEOF", []string{"X id @sqlite3 .shell"}},
	{"sqlite3 app.db 'insert into t values (1)'", []string{"W /ws/app.db", "!U"}},
	{"sed -i 's/a/b/' src/x.go", []string{"R /ws/src/x.go", "W /ws/src/x.go", "!U"}},
	{"sed -n '1,5p' log.txt", []string{"R /ws/log.txt", "!U", "!W"}},
	{"sed '1e cat /etc/shadow' x", []string{"R /etc/shadow", "X cat @sed e"}},
	{"sed 's/.*/cat \\/etc\\/shadow/e' x", []string{"U"}},
	{"sed 'w /root/.bashrc' x", []string{"W /root/.bashrc"}},
	{"sed -n '/x/w out.txt' x", []string{"W /ws/out.txt"}},
	{"sed 's/a/b/w /root/.bashrc' x", []string{"W /root/.bashrc"}},
	{"sed '1r /etc/shadow' x", []string{"R /etc/shadow"}},
	{"sed -e '1R /etc/shadow' x", []string{"R /etc/shadow"}},
	{"sed 'W /root/.bashrc' x", []string{"W /root/.bashrc"}},
	{"sed -f /tmp/s.sed x", []string{"R /tmp/s.sed", "U"}},
	{"awk '{print $1}' log.txt", []string{"R /ws/log.txt", "!U", "!W"}},
	{"awk -F: '{print $1}' /etc/passwd", []string{"R /etc/passwd", "!U", "!W"}},
	{`awk '{print > "/root/.bashrc"}' x`, []string{"W /root/.bashrc"}},
	{`awk '{print >> "/root/.bashrc"}' x`, []string{"W /root/.bashrc"}},
	{`awk 'BEGIN{while((getline l < "/etc/shadow")>0) print l}'`, []string{"R /etc/shadow"}},
	{`awk 'BEGIN{system("cat /etc/shadow")}'`, []string{"R /etc/shadow", "X cat @awk"}},
	{`awk 'BEGIN{"id" | getline x; print x}'`, []string{"X id @awk"}},
	{`awk '{print | "sh"}' x`, []string{"X sh @awk"}},
	{`awk '{system($0)}' x`, []string{"U"}},
	{`awk '{print > $2}' x`, []string{"U"}},
	{"awk -f /tmp/p.awk x", []string{"R /tmp/p.awk", "U"}},
	{"git diff --no-index /etc/shadow /dev/null", []string{"R /etc/shadow T"}},
	{"git diff src/a.go", []string{"R /ws/src/a.go", "!U"}},
	{"tar -xPf x.tar", []string{"U"}},
	{"tar --absolute-names -xf x.tar", []string{"U"}},
	{"tar -xf x.tar --to-command='sh -c id'", []string{"X sh @tar --to-command"}},
	{"tar -cf x.tar src --checkpoint=1 --checkpoint-action=exec='cat /etc/shadow'", []string{"R /etc/shadow", "X cat @tar --checkpoint-action"}},
	{"tar -xzf x.tgz", []string{"W /ws T", "!U"}},
	{"find . -fprint /root/.bashrc", []string{"W /root/.bashrc"}},
	{"xargs -a /etc/shadow echo", []string{"R /etc/shadow"}},
	{"less '+!cat /etc/shadow' x", []string{"R /etc/shadow", "X cat @less !"}},
	{"LESSOPEN='|cat /etc/shadow %s' less x", []string{"U"}},
	{"less README.md", []string{"R /ws/README.md", "!U"}},
	{"zip -TT 'sh -c id' x.zip a", []string{"X sh @zip -TT", "!W /ws/sh -c id"}},
	{"zip --unzip-command='cat /etc/shadow' -T x.zip a", []string{"R /etc/shadow"}},
	{"man -P 'cat /etc/shadow' ls", []string{"R /etc/shadow"}},
	{"npx -c 'cat /etc/shadow'", []string{"R /etc/shadow", "X cat @npx -c"}},
	{"npm exec -- cat /etc/shadow", []string{"R /etc/shadow", "X cat @npm exec"}},
	{"npm x -- cat /etc/shadow", []string{"R /etc/shadow"}},
	{"npx tsc -p .", []string{"!U", "!R /etc/shadow"}},

	{"vim -c 'r /etc/shadow' x", []string{"R /etc/shadow"}},
	{"vim '+r /etc/shadow' x", []string{"R /etc/shadow"}},
	{"vim -c 'w! /root/.bashrc' x", []string{"W /root/.bashrc"}},
	{"vim -c 'w !sh' x", []string{"X sh @vim !"}},
	{"vim -es -c 'silent !id' x", []string{"X id @vim !", "!R /ws/-c"}},
	{"ex -c 'r !cat /etc/shadow' x", []string{"R /etc/shadow", "X cat @ex !"}},
	{"vim -c 'g/x/w >> /root/.bashrc' -c q x", []string{"W /root/.bashrc"}},
	{`vim -c 'call system("id")' x`, []string{"U"}},
	{"vim -c 'exe \"!id\"' x", []string{"U"}},
	{"vim -S /tmp/s.vim x", []string{"R /tmp/s.vim", "U"}},
	{"ed x < /tmp/cmds", []string{"U"}},
	{"printf '!cat /etc/shadow\\nq\\n' | ed x", []string{"R /etc/shadow"}},
	{"emacs --batch --eval '(shell-command \"id\")'", []string{"U"}},
	{"vim -c 'set ts=4' -c wq src/x.go", []string{"W /ws/src/x.go", "!U"}},
	{"vim +10 src/x.go", []string{"R /ws/src/x.go", "!U"}},
	{"make -E 'x:;cat /etc/shadow' x", []string{"R /etc/shadow", "X cat @make recipe"}},
	{"make --eval='x:;cat /etc/shadow' x", []string{"R /etc/shadow"}},
	{"make -E '$(shell id)' x", []string{"U"}},
	{"make test", []string{"X make", "!U"}},

	{"git grep -O'cat /etc/shadow' x", []string{"R /etc/shadow", "X cat @git grep -O"}},
	{"git grep -O x", []string{"!U", "!R /etc/shadow"}},
	{"git rebase --exec 'cat /etc/shadow' HEAD~1", []string{"R /etc/shadow"}},
	{"git rebase -x 'make test' HEAD~3", []string{"X make @git rebase -x", "!U"}},
	{"git difftool --extcmd='cat /etc/shadow' HEAD", []string{"R /etc/shadow"}},
	{"git bisect run cat /etc/shadow", []string{"R /etc/shadow", "X cat @git bisect run"}},
	{"git submodule foreach 'cat /etc/shadow'", []string{"R /etc/shadow"}},
	{"git filter-branch --tree-filter 'cat /etc/shadow' HEAD", []string{"R /etc/shadow"}},
	{"git fetch --upload-pack='cat /etc/shadow' origin", []string{"R /etc/shadow"}},
	{"make SHELL=/tmp/x all", []string{"U"}},

	// B8: CDPATH makes cd's target unknown.
	{"CDPATH=/ cd etc && cat shadow", []string{"U"}},
	{"export CDPATH=/; cd etc; cat shadow", []string{"U"}},
	{"CDPATH=/ pushd etc && cat shadow", []string{"U"}},
	{"cd src && cat x.go", []string{"R /ws/src/x.go", "!U"}},
	{"cd ./etc && cat shadow", []string{"R /ws/etc/shadow"}},
}

func TestCommandFacts_Review(t *testing.T) {
	s := testShield()
	for _, c := range reviewCases {
		got := renderFacts(s.CommandFacts(c.line))
		for _, w := range c.want {
			neg := strings.HasPrefix(w, "!")
			w = strings.TrimPrefix(w, "!")
			switch {
			case !neg && !got[w]:
				t.Errorf("%q: want %q; got:\n%s", c.line, w, dumpFacts(got))
			case neg && len(w) == 1:
				for g := range got {
					if g[:1] == w {
						t.Errorf("%q: want no %s facts; got %q", c.line, w, g)
					}
				}
			case neg && got[w]:
				t.Errorf("%q: want no %q", c.line, w)
			}
		}
	}
}

// TestCommandFacts_LanguagesBenign: everyday sed, awk and sqlite3
// programs are read to the end, without an Unknown.
func TestCommandFacts_LanguagesBenign(t *testing.T) {
	s := testShield()
	for _, l := range []string{
		"sed -n '$p' x", "sed '/^$/d' x", "sed 's|a|b|g' x", `sed -e 's/\t/ /g' x`, `sed '1i\header' x`,
		"sed -n '/start/,/end/{p}' x", "sed -E 's/(a+)/\\1/2' x", "sed '0~3d' x", "sed -n '/x/I,+3p' x",
		"sed '$!N;s/\\n/ /' x", "sed ':a;N;$!ba;s/\\n/ /g' x", "sed 'y/abc/xyz/' x", "sed -i.bak 's/a/b/' x",
		"sed '1!G;h;$!d' x", "sed = x", "sed -n 'l' x", "sed '2q' x", "sed 's/a/b/w /dev/stdout' x",
		"awk 'NR==1' x", "awk '$3 > 10 {print $1}' x", "awk '{a[$1]++} END {for (k in a) print k, a[k]}' x",
		"awk 'BEGIN{FS=\":\"} {print $1 | \"sort\"}' x", "awk '{printf \"%s\\n\", $2}' x", "awk '$1 ~ /x/ || $2 > 3' x",
		"awk '{print $1 > \"/dev/stderr\"}' x", "awk -v n=3 'NR<=n' x",
		"sqlite3 app.db 'select * from t where a > 1;'", "sqlite3 -header -column app.db 'select 1'", "sqlite3 app.db '.tables'",
		"sqlite3 app.db .dump > backup.sql", "sqlite3 -json app.db 'select 1'",
	} {
		f := s.CommandFacts(l)
		if len(f.Unknown) > 0 {
			t.Errorf("%s: %v", l, f.Unknown)
		}
	}
}

// TestCommandFacts_LanguagesBounded: programs at the executor's command
// cap (64 KiB) are judged quickly, and what is not read is Unknown.
func TestCommandFacts_LanguagesBounded(t *testing.T) {
	s := testShield()
	const n = 64 << 10
	for _, c := range []struct {
		line    string
		unknown bool
	}{
		{"awk 'BEGIN{" + strings.Repeat(`"a" | getline x; `, n/18) + "}'", true},
		{"awk '{print " + strings.Repeat("$1 > 0 && ", n/11) + "1}' x", false},
		{"sed '" + strings.Repeat("p;", n/2) + "' x", true},
		{"sqlite3 app.db '" + strings.Repeat("select readfile(1); ", n/20) + "'", true},
		{"vim " + strings.Repeat("-c 'r x' ", n/9) + "x", false},
		{"cat $(printf '" + strings.Repeat("%s", n/2) + "' a)", false},
		{"ln -s / r; cat " + strings.Repeat("r/../", n/5), false},
	} {
		start := time.Now()
		f := s.CommandFacts(c.line)
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%.40q: %v", c.line, d)
		}
		if c.unknown && len(f.Unknown) == 0 {
			t.Errorf("%.40q: want an Unknown", c.line)
		}
	}
}

package shield

import (
	"strings"

	"github.com/opx-dev/opx/shield/shellx"
)

// Archivers and compressors.

// tarH reads tar: c creates -f from its operands (read, Tree), x
// extracts into -C or the working directory (written, Tree), t lists.
func tarH(x *call) {
	args := x.args
	mode := byte(0)
	var archive shellx.Word
	hasArchive := false
	dir := x.cwd
	var ops []shellx.Word
	absolute := false    // -P: members keep their absolute names
	removeFiles := false // --remove-files: members deleted once archived
	take := func(i *int) (shellx.Word, bool) {
		if *i+1 < len(args) {
			*i++
			return args[*i], true
		}
		return shellx.Word{}, false
	}
	setMode := func(c byte) {
		switch c {
		case 'c', 'r', 'u', 'A':
			mode = 'c'
		case 'x':
			mode = 'x'
		case 't', 'd':
			if mode == 0 {
				mode = 't'
			}
		}
	}
	for i := 0; i < len(args); i++ {
		t := args[i].Text
		switch {
		case strings.HasPrefix(t, "--"):
			name, v, eq := strings.Cut(t, "=")
			switch name {
			case "--create", "--append", "--update":
				mode = 'c'
			case "--extract", "--get":
				mode = 'x'
			case "--list", "--diff", "--compare":
				setMode('t')
			case "--file", "--directory", "--files-from", "--exclude-from", "--exclude", "--transform", "--owner", "--group", "--mode", "--use-compress-program", "--to-command", "--checkpoint-action", "--index-file":
				w := word(v)
				if !eq {
					w, _ = take(&i)
				}
				switch name {
				case "--file":
					archive, hasArchive = w, true
				case "--directory":
					dir = x.dirFrom(dir, w)
				case "--files-from", "--exclude-from":
					x.ref(kRead, w, false)
				case "--use-compress-program", "--to-command":
					x.payload(w, "tar "+name)
				case "--checkpoint-action":
					// exec=CMD runs CMD; other actions print.
					if c, ok := strings.CutPrefix(w.Text, "exec="); ok {
						x.payload(shellx.Word{Text: c, Dynamic: w.Dynamic}, "tar "+name)
					} else if w.Dynamic {
						x.payload(w, "tar "+name)
					}
				}
			case "--absolute-names":
				absolute = true
			case "--remove-files":
				removeFiles = true
			}
		case len(t) > 1 && t[0] == '-' || i == 0 && t != "" && !args[i].Dynamic && strings.Trim(t, "cxtrudAvzjJaf0123456789pPSkmhOwlBiGgWMRoTCXbLNK") == "":
			letters := strings.TrimPrefix(t, "-")
			for k := 0; k < len(letters); k++ {
				c := letters[k]
				setMode(c)
				if c == 'P' {
					absolute = true
				}
				switch c {
				case 'f', 'C', 'T', 'X', 'b', 'N', 'K', 'L', 'g', 'H', 'I', 'V':
					var w shellx.Word
					if t[0] == '-' && k+1 < len(letters) {
						w = word(letters[k+1:])
						k = len(letters)
					} else if v, ok := take(&i); ok {
						w = v
					}
					switch c {
					case 'f':
						archive, hasArchive = w, true
					case 'C':
						dir = x.dirFrom(dir, w)
					case 'T', 'X', 'g':
						x.ref(kRead, w, false)
					case 'I':
						x.payload(w, "tar -I")
					}
				}
			}
		default:
			if mode == 'c' {
				y := *x
				y.cwd = dir
				y.ref(kRead, args[i], true)
			}
			ops = append(ops, args[i])
		}
	}
	switch mode {
	case 'c':
		if hasArchive && archive.Text != "-" {
			x.ref(kWrite, archive, false)
		}
		if removeFiles {
			y := *x
			y.cwd = dir
			for _, w := range ops {
				y.ref(kDelete, w, true)
			}
		}
	case 'x':
		if hasArchive && archive.Text != "-" {
			x.ref(kRead, archive, false)
		}
		y := *x
		y.cwd = dir
		if len(ops) == 0 {
			y.refPath(kWrite, ".", true)
		}
		for _, w := range ops {
			y.ref(kWrite, w, true)
		}
		if dir == "" {
			x.m.unknown("tar extracts into a directory computed at run time")
		}
		if absolute {
			x.m.unknown("tar -P extracts members wherever their absolute names say")
		}
	default:
		if hasArchive && archive.Text != "-" {
			x.ref(kRead, archive, false)
		}
	}
}

// dirFrom resolves a -C DIR given while in dir.
func (x *call) dirFrom(dir string, w shellx.Word) string {
	y := *x
	y.cwd = dir
	y.cd(w)
	return y.cwd
}

var zipSpec = newSpec("-b -n -t -tt -x -i -P --password -O -I -F -s --unzip-command")

// zipH reads zip ARCHIVE FILES and 7z a/x.
func zipH(x *call) {
	args := x.args
	if x.name == "zip" {
		// zip -TT CMD (--unzip-command) tests the archive by running
		// CMD; -TT is one option, not -T twice.
		args = nil
		for i := 0; i < len(x.args); i++ {
			if x.args[i].Text == "-TT" && i+1 < len(x.args) {
				x.payload(x.args[i+1], x.name+" -TT")
				i++
				continue
			}
			args = append(args, x.args[i])
		}
	}
	opts, ops := zipSpec.parse(args)
	if x.name == "7z" || x.name == "7za" || x.name == "7zz" {
		if len(ops) < 2 {
			return
		}
		switch ops[0].Text {
		case "a", "u":
			x.ref(kWrite, ops[1], false)
			for _, w := range ops[2:] {
				x.ref(kRead, w, true)
			}
		case "x", "e":
			x.ref(kRead, ops[1], false)
			out := word(".")
			for _, o := range opts {
				if strings.HasPrefix(o.name, "-o") {
					out = word(o.name[2:])
				}
			}
			x.ref(kWrite, out, true)
		default:
			x.ref(kRead, ops[1], false)
		}
		return
	}
	for _, w := range vals(opts, "--unzip-command") {
		// zip -T tests the archive with this command.
		x.payload(w, x.name+" -TT")
	}
	if len(ops) == 0 {
		return
	}
	if ops[0].Text != "-" {
		x.ref(kWrite, ops[0], false)
	}
	tree := has(opts, "-r", "--recurse-paths")
	for _, w := range ops[1:] {
		x.ref(kRead, w, tree)
	}
	if has(opts, "-m", "--move") {
		for _, w := range ops[1:] {
			x.ref(kDelete, w, tree)
		}
	}
}

var unzipSpec = newSpec("-d -x -P")

func unzipH(x *call) {
	opts, ops := unzipSpec.parse(x.args)
	if len(ops) > 0 {
		x.ref(kRead, ops[0], false)
	}
	if has(opts, "-l", "-t", "-v", "-p", "-Z") {
		return
	}
	out, ok := val(opts, "-d")
	if !ok {
		out = word(".")
	}
	x.ref(kWrite, out, true)
}

var compressSpec = newSpec("-S --suffix -b -T --threads -L --level")

// compressH reads gzip and friends: each operand replaced in place by its
// (de)compressed form unless -c or -k.
func compressH(x *call) {
	opts, ops := compressSpec.parse(x.args)
	toStdout := has(opts, "-c", "--stdout", "--to-stdout", "-l", "--list", "-t", "--test")
	keep := has(opts, "-k", "--keep")
	for _, w := range ops {
		x.ref(kRead, w, has(opts, "-r", "--recursive"))
		if toStdout {
			continue
		}
		x.ref(kWrite, w, false)
		if !keep {
			x.ref(kDelete, w, false)
		}
	}
}

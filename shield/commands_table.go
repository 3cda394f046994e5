package shield

// table maps a program's base name to its model. A program not in it
// gets the generic model (see call.generic).
var table map[string]handler

func init() {
	table = map[string]handler{}
	set := func(h handler, names ...string) {
		for _, n := range names {
			table[n] = h
		}
	}

	// Readers.
	set(readAll(newSpec("")), "cat", "tac", "strings", "rev", "zcat", "bzcat", "xzcat", "lzcat", "zstdcat", "zless", "zmore", "md5sum",
		"sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum", "sum", "shasum", "md5", "sha256", "paste", "comm",
		"cmp", "file", "expand", "unexpand", "pr", "look", "tsort", "xmllint", "column", "fold", "fmt", "view", "hexdump", "hd", "od",
		"base32", "base64", "basenc", "uuencode", "uudecode", "csplit", "wc", "cut", "join", "diff3", "sdiff", "colordiff", "lsattr", "getfacl",
		"exiftool", "pdftotext", "mediainfo", "ffprobe", "identify", "objdump", "readelf", "nm", "ldd")
	set(readAll(newSpec("-n -c --lines --bytes --pid -s --sleep-interval")), "head", "tail")
	set(readAll(newSpec("-b -d -f -h -i -l -n -s -v -w")), "nl")
	set(readAll(newSpec("-l --language -r --line-range -H --highlight-line --style --theme --tabs --wrap --map-syntax --file-name -m --pager --color --decorations --paging")), "bat", "batcat")
	set(readWithOutput(newSpec("-o --output -t -k -S -T --field-separator --key --buffer-size --temporary-directory --parallel --files0-from"), "-o", "--output"), "sort")
	set(readWithOutput(newSpec("-o --output -f -t --from-code --to-code"), "-o", "--output"), "iconv")
	set(readWithOutput(newSpec("-x -X -I -L --exclude --label --ignore-matching-lines --to-file --from-file -U -C --unified --context -W --width -F --show-function-line --line-format"), "--output-file"), "diff")
	set(readThenWrite(newSpec("-f -s -w -c -n --skip-fields --skip-chars --check-chars")), "uniq")
	set(readThenWrite(newSpec("-c -g -l -o -s -n --cols --groupsize --len --seek")), "xxd")
	set(listAll(newSpec("-I --ignore -w -T --hide --color --format --sort --time-style --block-size --indicator-style --quoting-style --tabsize --width")), "ls", "dir", "vdir", "exa", "eza", "lsd")
	set(listAll(newSpec("-d --max-depth -B --block-size -t --threshold --exclude -X --exclude-from --time-style --files0-from")), "du")
	set(listAll(newSpec("-L -P -I -o --charset --filelimit --timefmt --sort")), "tree")
	set(listAll(newSpec("-c --format --printf")), "stat")
	set(listAll(newSpec("")), "realpath", "readlink", "namei")
	set(grepLike(false, grepSpec), "grep", "egrep", "fgrep", "zgrep", "zegrep", "zfgrep", "bzgrep", "xzgrep")
	set(grepLike(true, rgSpec), "rg", "ag", "ack", "ack-grep", "pt", "ugrep")
	set(sedH, "sed", "gsed")
	set(sqliteH, "sqlite3")
	set(lessH, "less", "more", "most")
	set(manH, "man")
	set(makeH, "make", "gmake")
	set(awkH, "awk", "gawk", "mawk", "nawk")
	set(jqH, "jq", "yq", "gojq", "jaq")
	set(editorH, "vim", "vi", "nvim", "nano", "emacs", "micro", "ed", "ex", "pico", "joe", "mcedit", "code", "subl", "gedit", "kate")
	set(sourceH, "source", ".")
	set(environH, "env", "printenv", "set", "export", "declare", "typeset", "compgen")
	set(historyH, "history", "fc")
	set(runOnly, "echo", "printf", "true", "false", "test", "[", "[[", "sleep", "yes", "seq", "expr", "bc", "dc", "let", "read", "wait",
		"jobs", "fg", "bg", "disown", "pwd", "id", "whoami", "groups", "logname", "users", "who", "w", "last", "uname", "arch", "date", "cal",
		"df", "free", "vmstat", "iostat", "mpstat", "sar", "ps", "pstree", "pgrep", "pidof", "top", "htop", "btop", "atop", "lsof", "ss",
		"netstat", "uptime", "nproc", "lscpu", "lsblk", "lsusb", "lspci", "lsmod", "dmesg", "which", "type", "whereis", "hash", "tput",
		"clear", "reset", "stty", "tty", "umask", "ulimit", "exit", "return", "shift", "break", "continue", "local", "readonly", "unset",
		"trap", "alias", "unalias", "shopt", "getconf", "locale", "tr", "basename", "dirname", "mktemp",
		"uuidgen", "factor", "numfmt", "nvidia-smi", "journalctl", "getent", "whatis", "apropos", "info", "help",
		"mkfifo-no", "sync", "systemd-analyze", "loginctl", "timedatectl", "localectl", "renice",
		"envsubst", "xdg-open", "open", "notify-send", "say", "beep", "cowsay", "figlet", "lolcat", "pbcopy", "xclip", "xsel", "wl-copy")
	set(cdH, "cd", "pushd", "popd", "chdir")

	// Writers.
	set(teeH, "tee", "sponge")
	set(copyH, "cp", "mv", "ln", "install", "gcp", "gmv")
	set(touchH, "touch", "mkdir", "truncate", "mkfifo", "mknod", "fallocate")
	set(ddH, "dd")
	set(permsH, "chmod", "chown", "chgrp", "chattr", "setfacl", "chcon")
	set(deviceH, "mkfs", "mkfs.ext2", "mkfs.ext3", "mkfs.ext4", "mkfs.xfs", "mkfs.btrfs", "mkfs.vfat", "mkfs.fat", "mkfs.ntfs", "mkfs.exfat",
		"mke2fs", "mkswap", "wipefs", "fdisk", "sfdisk", "cfdisk", "gdisk", "sgdisk", "parted", "blkdiscard", "badblocks", "hdparm", "cryptsetup",
		"losetup", "pvcreate", "vgcreate", "lvcreate", "lvremove", "vgremove", "pvremove", "zpool", "tune2fs", "e2fsck", "fsck", "resize2fs", "debugfs")
	set(shredH, "shred", "wipe")
	set(tarH, "tar", "gtar", "bsdtar")
	set(zipH, "zip", "7z", "7za", "7zz")
	set(unzipH, "unzip")
	set(compressH, "gzip", "gunzip", "xz", "unxz", "bzip2", "bunzip2", "zstd", "unzstd", "lz4", "lzma", "unlzma", "pigz", "compress", "uncompress", "brotli")
	set(patchH, "patch")

	// Deleters.
	set(deleteH(false), "rm", "rmdir", "unlink")
	set(deleteH(true), "srm", "trash", "trash-put", "rmtrash")
	set(findH, "find", "gfind")

	// Network.
	set(curlH, "curl")
	set(wgetH, "wget", "wget2")
	set(httpieH, "http", "https", "xh", "xhs", "httpie")
	set(ariaH, "aria2c")
	set(ncH, "nc", "ncat", "netcat", "nc.openbsd", "nc.traditional")
	set(socatH, "socat")
	set(rawH, "telnet")
	set(sshH, "ssh", "autossh", "mosh")
	set(scpH, "scp", "rsync")
	set(rcloneH, "rclone")
	set(sessionH, "sftp", "ftp", "tftp", "lftp", "ssh-copy-id", "smbclient", "rdesktop", "xfreerdp", "vncviewer")
	set(lookupH, "dig", "nslookup", "host", "drill", "kdig", "ping", "ping6", "traceroute", "traceroute6", "tracepath", "mtr", "arping", "fping", "whois", "hping3", "tcptraceroute")
	set(gitH, "git")
	set(jsH, "npm", "yarn", "pnpm", "npx", "pnpx", "bunx")
	set(pipH, "pip", "pip3", "pipx", "uv", "poetry", "pdm", "pipenv", "gem", "bundle", "bundler", "composer", "conda", "mamba", "brew", "twine")
	set(goH, "go")
	set(cargoH, "cargo", "rustup")
	set(dockerH, "docker", "podman", "nerdctl")
	set(func(x *call) { x.compose(x.args) }, "docker-compose", "podman-compose")
	set(kubeH, "kubectl", "oc", "helm", "k9s", "kustomize")
	set(sysPkgH, "apt", "apt-get", "aptitude", "dnf", "yum", "apk", "zypper", "pacman", "snap")
	set(trustH, "apt-key", "add-apt-repository", "update-ca-certificates", "trust")
	set(cloudH, "aws", "gcloud", "gsutil", "az", "gh", "doctl", "heroku", "vercel", "netlify", "flyctl", "fly")

	// Shells, interpreters, build tools.
	for n := range shells {
		if shells[n] {
			table[n] = shellH
		}
	}
	set(evalH, "eval")
	set(interpH, "python", "python2", "python3", "pypy", "pypy3", "python3.8", "python3.9", "python3.10", "python3.11", "python3.12", "python3.13",
		"node", "nodejs", "perl", "ruby", "php", "lua", "luajit", "deno", "bun", "osascript", "Rscript")
	set(buildH, "ninja", "cmake", "mvn", "gradle", "gradlew", "mvnw", "ant", "sbt", "bazel", "bazelisk", "meson", "scons",
		"pytest", "py.test", "tox", "nox", "jest", "vitest", "mocha", "karma", "playwright", "cypress", "tsc", "webpack", "vite", "rollup",
		"esbuild", "swc", "babel", "turbo", "nx", "lerna", "just", "task", "rake", "dotnet", "msbuild", "javac", "java", "kotlinc", "scalac",
		"gcc", "g++", "cc", "c++", "clang", "clang++", "rustc", "ghc", "cabal", "stack", "mix", "elixir", "erl", "zig", "swift", "xcodebuild",
		"golangci-lint", "staticcheck", "govulncheck", "mypy", "pyright", "pylint", "flake8", "bandit", "shellcheck", "hadolint", "tflint",
		"stylelint", "markdownlint", "yamllint", "jsonlint", "cspell", "codespell", "pre-commit", "lefthook", "husky", "semgrep", "trivy",
		"uvicorn", "gunicorn", "flask", "django-admin", "manage.py", "rails", "hugo", "jekyll", "mkdocs", "sphinx-build", "storybook", "next",
		"nuxt", "ng", "expo", "flutter", "dart", "air", "reflex", "nodemon", "pm2", "supervisorctl", "watchexec", "entr", "hyperfine", "ab", "wrk")
	set(formatter(newSpec(""), []string{"-w"}, nil, false), "gofmt", "goimports", "gofumpt", "shfmt")
	set(formatter(newSpec("--config --ignore-path --parser --plugin"), []string{"-w", "--write"}, nil, false), "prettier")
	set(formatter(newSpec("-c --config -o --output-file --ext --rulesdir -f --format"), []string{"--fix"}, nil, false), "eslint")
	set(formatter(newSpec("-l --line-length -t --target-version --config --include --exclude --extend-exclude"), nil, []string{"--check", "--diff"}, true), "black", "isort", "autopep8", "yapf")
	set(formatter(newSpec("--config --select --ignore --extend-select --line-length --target-version -o --output-file"), nil, nil, true), "ruff")
	set(formatter(newSpec("--edition --config --config-path --emit"), nil, []string{"--check"}, false), "rustfmt")
	set(formatter(newSpec("--style -style --assume-filename"), []string{"-i"}, nil, false), "clang-format")
	set(terraformH, "terraform", "tofu")
	set(tmuxH, "tmux", "screen")

	// Persistence, privilege, system.
	set(crontabH, "crontab")
	set(atH, "at", "batch", "atq")
	set(systemctlH, "systemctl")
	set(launchctlH, "launchctl")
	set(usersH, "useradd", "adduser", "usermod", "userdel", "deluser", "groupadd", "groupmod", "groupdel", "gpasswd", "chsh", "chfn",
		"passwd", "chpasswd", "chage", "pwconv", "visudo", "vipw", "vigr", "newusers")
	set(netConfH, "iptables", "ip6tables", "iptables-legacy", "iptables-nft", "ebtables", "arptables", "iptables-restore", "ip6tables-restore",
		"nft", "ufw", "firewall-cmd", "tc", "route", "ifconfig", "ifup", "ifdown", "nmcli", "wg", "wg-quick", "brctl", "ip")
	set(mountH, "mount", "umount", "swapon", "swapoff")
	set(moduleH, "modprobe", "insmod", "rmmod", "kmod", "depmod")
	set(sysctlH, "sysctl")
	set(powerH, "shutdown", "reboot", "halt", "poweroff", "init", "telinit")
	set(hostnameH, "hostname", "hostnamectl")
	set(killH, "kill", "pkill", "killall", "killall5")
	set(opensslH, "openssl")
	set(gpgH, "gpg", "gpg2")
	set(sshKeygenH, "ssh-keygen")
	set(secretStoreH, "security", "secret-tool", "pass", "gopass", "ssh-add", "keyctl")
}

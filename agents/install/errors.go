package install

import "errors"

// Reading the settings.
var (
	// ErrSettings is returned when a settings file cannot be merged into:
	// not valid JSON (or JSON with comments), not an object, a "hooks"
	// member of the wrong shape, or larger than MaxSettingsBytes. The file
	// is left as it was.
	ErrSettings = errors.New("settings file not usable")

	// ErrSymlink is returned when a workspace's settings file, or the
	// directory holding it, is a symbolic link: a repository could point
	// it at any file of the user's, so opx does not write through it.
	ErrSymlink = errors.New("settings path is a symbolic link")
)

// Choosing the command.
var (
	// ErrBuildCache is returned by Executable when the running opx is a
	// binary of `go run` or `go test`, which the go command deletes or
	// replaces.
	ErrBuildCache = errors.New("opx runs from Go's build cache")

	// ErrCommand is returned when the opx hooks would run is not an
	// absolute path to an executable file, or cannot be quoted for the
	// shell.
	ErrCommand = errors.New("unusable hook command")
)

// Codex trust.
var (
	// ErrCodexTrust is returned by Install for Codex when the hooks were
	// written but could not be recorded as trusted: Codex would not run
	// them. Its message says why and what to do.
	ErrCodexTrust = errors.New("codex hooks not trusted")
)

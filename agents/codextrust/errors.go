package codextrust

import "errors"

var (
	// ErrAppServer is returned when `codex app-server` cannot be started,
	// exits early, or answers a request with an error or a malformed or
	// oversized message.
	ErrAppServer = errors.New("codex app-server")

	// ErrNoHooks is returned by Trust when the selection matches no hook:
	// the hooks to trust are not where Codex looks for them.
	ErrNoHooks = errors.New("no codex hook selected")

	// ErrNotTrusted is returned when a selected hook is still not trusted
	// after its trust was written (another layer, such as managed
	// configuration, decides its trust).
	ErrNotTrusted = errors.New("codex hook not trusted")
)

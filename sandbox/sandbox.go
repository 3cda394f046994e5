package sandbox

// Config says what a sandboxed process may still do. The agent's is
// empty but for the engine's port: no paths at all.
type Config struct {
	// ReadPaths and WritePaths are files or directories left readable, or
	// readable and writable (with their subtrees).
	ReadPaths, WritePaths []string
	// ConnectTCP lists the TCP ports the process may connect to (on any
	// host; the engine listens on loopback only). Binding is never allowed.
	ConnectTCP []uint16
}

// Capabilities is what the kernel offers the sandbox.
type Capabilities struct {
	Platform    string `json:"platform"`
	Mechanism   string `json:"mechanism"` // "landlock" or "none"
	LandlockABI int    `json:"landlock_abi"`
	Filesystem  bool   `json:"filesystem"` // Landlock ABI >= 1
	Network     bool   `json:"network"`    // TCP bind/connect, ABI >= 4
	Scoping     bool   `json:"scoping"`    // abstract unix sockets and signals, ABI >= 6
	Seccomp     bool   `json:"seccomp"`    // seccomp filters with TSYNC
	Detail      string `json:"detail,omitempty"`
}

// Sandbox applies the kernel sandbox of this platform.
type Sandbox struct {
	caps Capabilities
}

// New probes the kernel once and returns the platform's sandbox.
func New() *Sandbox { return &Sandbox{caps: probe()} }

// Available reports whether ApplySelf can confine this process.
func (s *Sandbox) Available() bool { return s.caps.Filesystem && s.caps.Seccomp }

// Mode names the mechanism: "landlock" or "none".
func (s *Sandbox) Mode() string { return s.caps.Mechanism }

// Probe returns what the kernel offers.
func (s *Sandbox) Probe() Capabilities { return s.caps }

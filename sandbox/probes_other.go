//go:build !linux

package sandbox

// runProbes skips every probe: there is no sandbox here to test.
func (s *Sandbox) runProbes(t CanaryTargets) []ProbeResult {
	return s.UnavailableCanary(t, "no sandbox on "+s.caps.Platform).Probes
}

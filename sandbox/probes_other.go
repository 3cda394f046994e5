//go:build !linux

package sandbox

// runProbes skips every probe: there is no sandbox here to test.
func (s *Sandbox) runProbes(t CanaryTargets) []ProbeResult {
	reason := "no sandbox on " + s.caps.Platform
	return []ProbeResult{
		{Name: ProbeFileRead, Status: ProbeSkipped, Target: t.ReadFile, Error: reason},
		{Name: ProbeFileWrite, Status: ProbeSkipped, Target: t.WriteDir, Error: reason},
		{Name: ProbeNetwork, Status: ProbeSkipped, Target: t.ConnectAddr, Error: reason},
		{Name: ProbeProcessSpawn, Status: ProbeSkipped, Error: reason},
	}
}

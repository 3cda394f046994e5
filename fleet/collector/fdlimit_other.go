//go:build !unix

package collector

func defaultMaxOpenMirrors() int { return DefaultMaxOpenMirrors }

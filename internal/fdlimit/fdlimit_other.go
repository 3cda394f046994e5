//go:build !linux

package fdlimit

// Raise does nothing outside Linux: it reports Supported false.
func Raise() (Result, error) { return Result{}, nil }

package engine

import (
	"github.com/opx-dev/opx/engine/auth"
	"google.golang.org/grpc"
)

// ServiceInfo returns what the running engine's gRPC server registers, so
// tests can enumerate every method on the port.
func (e *Engine) ServiceInfo() map[string]grpc.ServiceInfo {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.srv == nil {
		return nil
	}
	return e.srv.GetServiceInfo()
}

// RequiredCredential names the credential a full method name requires:
// "client", "agent" or "refused".
func RequiredCredential(fullMethod string) string {
	return auth.RequiredCredential(fullMethod).String()
}

// Package natsrvtest starts the embedded JetStream server for tests.
package natsrvtest

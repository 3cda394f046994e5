// Package chronicletest helps tests stop a rollback part way, so that
// crash tests can kill the process carrying it out at a moment the test
// chooses rather than after a delay.
package chronicletest

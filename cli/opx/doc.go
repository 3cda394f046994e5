// Command opx is the opx command line; see package cli for the commands.
package main
